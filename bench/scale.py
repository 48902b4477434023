"""How report, compare, merge, verify and the HTML page grow with the size of a results folder.

One small real grid runs first (scenarios x two scripted policies, one rep each) as shard 1/1;
its reps are the templates. For each size, 64 shards of one grid of that many reps are then
written through the recorder (plans, manifest lines, rows appended by evalkit's own record
types) with every rep's evidence copied byte for byte from its template (about 47 KB in 7
files, as a real rep keeps), so every trial re-derives. Each command then runs as its own
`evalkit` process, niced, and is measured by wall time and the peak RSS of its largest
process (wait4's rusage):

- `merge` of the 64 shards (into the folder every other command reads, and once more into a
  second folder for `compare`);
- `verify`, with its trials/s;
- `report` (table and json, after verify: it holds the folder to verify's record, which
  lists every kept file), `compare` of the two folders;
- `report --html`: build time and page size, then in headless Chromium the time to the drawn
  overview and one filter.

Each figure is printed beside its goal, and each size beside the one before it (the growth
ratio; linear is 10x for a 10x step, the goal at most 12x). The load average is printed
before and after, since the machine may be shared.

Usage: .venv/bin/python bench/scale.py [--sizes 1000,10000] [--largest] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path

from _common import EVALKIT, REPO, isolate

sys.path.insert(0, str(REPO))

SHARDS = 64
SCENARIOS = "P1,N1,P2,N2"
MODELS = "policy:oracle,policy:offer-only"
BYTES_PER_REP = 60_000
"""evidence plus records, with headroom over the ~47 KB a rep keeps; counted three times
(the shards, the merged folder, the second merged folder)."""

GROWTH_GOAL = 12.0
RSS_GOAL_MB = 1024.0
REPORT_GOAL_S = 5.0
MERGE_GOAL_S = 60.0
VERIFY_KEEP = 0.8
OPEN_GOAL_MS = 2000.0
FILTER_GOAL_MS = 200.0


@dataclass
class Run:
    seconds: float
    cpu: float
    """user + system seconds of the command and every process it waited for"""
    rss_mb: float
    stdout: str


@dataclass
class Size:
    reps: int
    runs: dict[str, Run] = field(default_factory=dict)
    trials_per_s: float = 0.0
    page_mb: float = 0.0
    open_ms: float = 0.0
    filter_ms: float = 0.0
    cell_ms: float = 0.0
    """a page whose reps load per cell: from a click on a cell to its reps drawn"""


def evalkit(*args: str, timeout: float = 3600) -> Run:
    """One niced `evalkit` process: wall time and the peak RSS of its largest process."""
    command = ["nice", "-n", "10", str(EVALKIT), "--suite", str(REPO), *args]
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - began
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if child.returncode not in (0, 1):
        sys.exit(
            f"evalkit {' '.join(args[:2])} failed (exit {child.returncode}):\n{stderr[-2000:]}"
        )
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout)


def template(base: Path) -> Path:
    """The real reps every fabricated rep copies: one scripted grid, shard 1/1."""
    folder = base / "template"
    command = [str(EVALKIT), "--suite", str(REPO), "grid", str(folder), "--scenarios", SCENARIOS,
               "--models", MODELS, "--jobs", "2", "--shard", "1/1"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        sys.exit(f"the template grid failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return folder


def fabricate(source: Path, out: Path, reps: int, shards: int = SHARDS) -> list[Path]:
    """`shards` shard folders of one grid of about `reps` reps, written through the recorder:
    cell k of the grid (scenario, model, rep) goes to shard k mod N, as `--shard` slices it."""
    from evalkit.models import PlanCell
    from evalkit.records.folder.results import append_row, read_rows
    from evalkit.records.folder.workdir import Workdir, safe_name

    records = Workdir(source)
    (plan,) = records.read_plans().items
    lines = {(x.scenario, x.model): x for x in records.read_evidence_index().items}
    rows = {(r.scenario, r.model): r for r in read_rows(records.results)}
    pairs = sorted(lines)
    per_cell = max(1, reps // len(pairs))
    cells = [(s, m, rep) for s, m in pairs for rep in range(1, per_cell + 1)]
    digest = "sha256:" + sha256(f"scale-{len(cells)}".encode()).hexdigest()
    folders = []
    for index in range(shards):
        folder = out / f"shard-{index + 1}"
        shard = Workdir(folder)
        mine = cells[index::shards]
        numbers: dict[tuple[str, str], list[int]] = {}
        for s, m, rep in mine:
            numbers.setdefault((s, m), []).append(rep)
        plan_cells = [
            PlanCell(scenario=s, model=m, reps=len(n), variant="suite", rep_numbers=n)
            for (s, m), n in sorted(numbers.items())
        ]
        folder.mkdir(parents=True)
        shutil.copytree(source / "subjects", folder / "subjects")
        shard.append_plan(
            plan.model_copy(
                update={
                    "cells": plan_cells,
                    "grid_digest": digest,
                    "shard": f"{index + 1}/{shards}",
                    "grid_cells": len(cells),
                }  # fmt: skip
            )
        )
        for s, m, rep in mine:
            line = lines[(s, m)]
            evidence = f"evidence/{plan.run_id}/{s}/{safe_name(m)}/rep-{rep}"
            (folder / evidence).mkdir(parents=True)
            for name in line.files.values():
                shutil.copyfile(source / line.evidence / name, folder / evidence / name)
            shard.append_evidence_line(line.model_copy(update={"rep": rep, "evidence": evidence}))
            append_row(shard.results, rows[(s, m)].model_copy(update={"rep": rep}))
        folders.append(folder)
    return folders


def browse(page: Path) -> tuple[float, float, float]:
    """Milliseconds from navigation to the drawn overview, for one verdict filter (on a page
    whose reps load per cell, within the first cell, once it is loaded) and to load that cell."""
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.browser.chromium import chromium, open_page

    with chromium() as driver:
        open_page(driver, page, timeout=600)
        ready = float(driver.execute_script("return performance.now()"))
        cell = 0.0
        if driver.find_elements("id", "rep-note"):  # a large page: open a cell, as a person would
            clicked = float(
                driver.execute_script(
                    "var t = performance.now();"
                    "document.querySelector('#overview .level tbody tr').click(); return t;"
                )
            )
            WebDriverWait(driver, 600, poll_frequency=0.05).until(
                lambda d: d.find_elements("css selector", "#rep-rows[data-loaded]")
            )
            cell = float(driver.execute_script("return window.evalkitListDrawnAt")) - clicked
        filtered = float(
            driver.execute_script(
                "var s = document.getElementById('filter-verdict'); var t = performance.now();"
                "s.value = 'FAIL'; s.dispatchEvent(new Event('change'));"
                "document.getElementById('rep-count').textContent;"
                "var ms = performance.now() - t; s.value = ''; "
                "s.dispatchEvent(new Event('change')); return ms;"
            )
        )
    return ready, filtered, cell


def measure(base: Path, source: Path, reps: int) -> Size:
    size = Size(reps)
    root = base / f"reps-{reps}"
    began = time.perf_counter()
    shards = fabricate(source, root / "shards", reps)
    made = time.perf_counter() - began
    print(f"  fabricated {reps} reps in {SHARDS} shards in {made:.0f} s", flush=True)
    a, b = root / "a", root / "b"
    shard_args = [str(s) for s in shards]
    size.runs["merge"] = evalkit("merge", str(a), *shard_args)
    evalkit("merge", str(b), *shard_args)
    size.runs["verify"] = evalkit("verify", str(a))
    size.trials_per_s = reps_in(a) / size.runs["verify"].seconds
    # after verify, as a user runs them: report then holds the folder to verify's record
    size.runs["report"] = evalkit("report", str(a))
    size.runs["report json"] = evalkit("report", str(a), "--format", "json")
    size.runs["compare"] = evalkit("compare", str(a), str(b), "--allow-confounded")
    page = root / "report.html"
    size.runs["report --html"] = evalkit("report", str(a), "--html", str(page))
    size.page_mb = page.stat().st_size / 1e6
    size.open_ms, size.filter_ms, size.cell_ms = browse(page)
    return size


def reps_in(folder: Path) -> int:
    with (folder / "manifest.jsonl").open() as lines:
        return sum(1 for _ in lines)


def _free_space(base: Path, sizes: list[int]) -> None:
    need = sum(sizes) * BYTES_PER_REP * 3
    free = shutil.disk_usage(base).free
    print(f"disk: {need / 1e9:.1f} GB needed for {', '.join(map(str, sizes))} reps "
          f"(three copies each), {free / 1e9:.1f} GB free under {base}")  # fmt: skip
    if free < need:
        sys.exit(f"not enough free space under {base}: need {need / 1e9:.1f} GB")


def _verdict(value: float, goal: float, at_most: bool = True) -> str:
    met = value <= goal if at_most else value >= goal
    return "met" if met else "NOT met"


def print_size(size: Size, before: Size | None, first: Size) -> None:
    print(f"\n{size.reps} reps (peak RSS goal < {RSS_GOAL_MB:g} MB)")
    for name, run in size.runs.items():
        growth = ""
        if before is not None and name in before.runs:
            step = size.reps / before.reps
            goal = GROWTH_GOAL * step / 10
            was = before.runs[name]
            wall = run.seconds / max(was.seconds, 1e-9)
            cpu = run.cpu / max(was.cpu, 1e-9)
            growth = (
                f"; for x{step:g} reps wall x{wall:.1f} ({_verdict(wall, goal)}), "
                f"cpu x{cpu:.1f} ({_verdict(cpu, goal)}) (goal <= x{goal:g})"
            )
        print(f"  {name:14} wall {run.seconds:7.1f} s  cpu {run.cpu:7.1f} s  peak RSS "
              f"{run.rss_mb:5.0f} MB ({_verdict(run.rss_mb, RSS_GOAL_MB)}){growth}")  # fmt: skip
    report, merge = size.runs["report"].seconds, size.runs["merge"].seconds
    print(f"  report {report:.1f} s (goal <= {REPORT_GOAL_S:g} s at 100,000 reps: "
          f"{_verdict(report, REPORT_GOAL_S)})")  # fmt: skip
    print(f"  merge of {SHARDS} shards {merge:.1f} s (goal <= {MERGE_GOAL_S:g} s: "
          f"{_verdict(merge, MERGE_GOAL_S)})")  # fmt: skip
    keep = size.trials_per_s / first.trials_per_s
    said = (size.runs["verify"].stdout.strip().splitlines() or ["(nothing)"])[-1]
    print(f"  verify says: {said}")
    per_cpu = size.reps / max(size.runs["verify"].cpu, 1e-9)
    print(f"  verify {size.trials_per_s:.0f} trials/s ({per_cpu:.0f} per cpu-second), "
          f"{keep:.2f} of the {first.reps}-rep rate "
          f"(goal >= {VERIFY_KEEP:g}: {_verdict(keep, VERIFY_KEEP, at_most=False)})")  # fmt: skip
    print(f"  html page {size.page_mb:.1f} MB; open to overview {size.open_ms:.0f} ms "
          f"(goal <= {OPEN_GOAL_MS:g}: {_verdict(size.open_ms, OPEN_GOAL_MS)}); filter "
          f"{size.filter_ms:.0f} ms (goal <= {FILTER_GOAL_MS:g}: "
          f"{_verdict(size.filter_ms, FILTER_GOAL_MS)})")  # fmt: skip
    if size.cell_ms:
        shown = f"{size.cell_ms:.0f} ms"
        print(f"  reps load per cell: the first cell's reps drawn {shown} after a click")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="rep counts, smallest first")
    parser.add_argument("--largest", action="store_true", help="also 100,000 reps (~15 GB)")
    parser.add_argument("--keep", help="build the folders here and leave them")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x] + ([100_000] if args.largest else [])

    from tests.browser.chromium import missing

    why = missing()
    if why:
        sys.exit(f"bench/scale.py needs the browser: {why}")
    base = Path(args.keep or tempfile.mkdtemp(prefix="evalkit-bench-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    _free_space(base, sizes)
    isolate(base / "world")
    print(f"load average before: {_load()}", flush=True)
    try:
        source = template(base)
        done: list[Size] = []
        for reps in sizes:
            print(f"{reps} reps: fabricating and measuring", flush=True)
            done.append(measure(base, source, reps))
            print_size(done[-1], done[-2] if len(done) > 1 else None, done[0])
            print(f"  load average now: {_load()}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

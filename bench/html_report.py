"""How the HTML report copes with a big results folder.

Fabricates a folder of --reps reps (12 scenarios x 4 models) whose transcripts are of a real
model's size (uniform between --min-mb and --max-mb), builds the page with `report --html`'s
library call, then opens it from disk in headless Chromium and times what a person waits
for: the page until the overview is drawn, a filter, and one rep's drill-down. Prints each
figure and its ratio to the goal (the overview in under 2 s on a 2-core machine).

Usage: .venv/bin/python bench/html_report.py [--reps 2000] [--min-mb 0.2] [--max-mb 2]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, isolate

sys.path.insert(0, str(REPO))

GOAL_MS = 2000.0


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--min-mb", type=float, default=0.2)
    parser.add_argument("--max-mb", type=float, default=2.0)
    parser.add_argument("--keep", help="build the folder here and leave it")
    args = parser.parse_args()

    from evalkit.records.pages.html import write_html
    from evalkit.suite.config import Suite
    from tests.browser.chromium import chromium, missing, open_page
    from tests.fabricated_results import make_folder

    why = missing()
    if why:
        sys.exit(f"bench/html_report.py needs the browser: {why}")
    base = Path(args.keep or tempfile.mkdtemp(prefix="evalkit-bench-html-"))
    isolate(base / "world")
    suite = Suite(REPO)
    scenarios = tuple(s.id for s in suite.scenarios("all"))
    models = ("sonnet", "haiku", "opus", "policy:oracle")
    per_cell = math.ceil(args.reps / (len(scenarios) * len(models)))
    work = base / "results"

    t0 = time.perf_counter()
    rows = make_folder(
        suite, work, models=models, scenarios=scenarios, reps=per_cell,
        size=(int(args.min_mb * 1e6), int(args.max_mb * 1e6)),
    )
    fabricated = time.perf_counter() - t0
    folder_mb = _size(work) / 1e6
    print(f"fabricated {len(rows)} reps, {folder_mb:.0f} MB of evidence in {fabricated:.0f} s")

    t0 = time.perf_counter()
    stats = write_html(suite, work, base / "report.html")
    built = time.perf_counter() - t0
    side = _size(stats.sibling_dir) / 1e6 if stats.sibling_dir else 0.0
    print(
        f"built the page in {built:.1f} s ({folder_mb / built:.0f} MB/s of evidence): "
        f"page {stats.page_bytes / 1e6:.1f} MB, evidence "
        + (f"in {stats.sibling_dir.name}/ {side:.0f} MB" if stats.sibling_dir else "inline")
        + f" ({folder_mb / max(stats.evidence_bytes / 1e6, 0.001):.1f}x smaller than kept)"
    )

    with chromium() as driver:
        t0 = time.perf_counter()
        open_page(driver, base / "report.html", timeout=300)
        opened_ms = (time.perf_counter() - t0) * 1000
        render_ms = driver.execute_script("return window.evalkitRenderMs")
        ready_ms = driver.execute_script("return performance.now()")
        filter_ms = driver.execute_script(
            "var s = document.getElementById('filter-verdict'); var t = performance.now();"
            "s.value = 'FAIL'; s.dispatchEvent(new Event('change'));"
            "var shown = document.getElementById('rep-count').textContent;"
            "var ms = performance.now() - t; s.value = ''; s.dispatchEvent(new Event('change'));"
            "return [ms, shown];"
        )
        biggest = max(range(len(rows)), key=lambda i: _transcript_size(work, rows[i]))
        t0 = time.perf_counter()
        driver.execute_script(
            "document.querySelector('#rep-rows tr[data-rep=\"' + arguments[0] + '\"]').click()",
            biggest,
        )
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, 120).until(
            lambda d: d.find_elements("css selector", "#detail ol.timeline li")
        )
        drill_ms = (time.perf_counter() - t0) * 1000
    print(f"page open to overview drawn: {ready_ms:.0f} ms (ratio to the 2 s goal "
          f"{ready_ms / GOAL_MS:.2f}); driver round trip {opened_ms:.0f} ms")
    print(f"overview and rep list drawn by the page's script: {render_ms:.0f} ms "
          f"(ratio {render_ms / GOAL_MS:.2f})")
    print(f"filter verdict=FAIL over {len(rows)} reps: {filter_ms[0]:.0f} ms "
          f"({filter_ms[1]} shown)")
    mb = _transcript_size(work, rows[biggest]) / 1e6
    print(f"drill-down into the largest transcript ({mb:.1f} MB): {drill_ms:.0f} ms")
    print(f"folder: {base}" if args.keep else "")


def _transcript_size(work: Path, row: object) -> int:
    from evalkit.records.folder.workdir import safe_name

    r = row  # a ResultRow
    folder = work / "evidence" / r.run_id / r.scenario / safe_name(r.model) / f"rep-{r.rep}"  # type: ignore[attr-defined]
    path = folder / "transcript.jsonl"
    return path.stat().st_size if path.is_file() else 0


if __name__ == "__main__":
    main()

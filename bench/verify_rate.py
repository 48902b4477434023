"""How fast `evalkit verify` re-derives trials.

A small real grid runs once (scenarios x two policies, one rep each); its evidence folders,
manifest lines, TSV rows and plan are then copied under new run ids until the workdir holds
at least --trials trials. Only `evalkit.verify.verify_workdir` on that folder is timed, in
--passes passes, each with the suite loaded afresh; the median pass is the figure.

Usage: .venv/bin/python bench/verify_rate.py [--trials 200] [--scenarios P1,N1,P2,N2] [--passes 3]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import EVALKIT, REPO, isolate

GOAL = 100.0
"""trials per second, wall, on an idle 2-core machine"""


def replicate(work: Path, copies: int) -> None:
    """Append `copies` copies of the one recorded run, each under its own run id."""
    manifest = (work / "manifest.jsonl").read_text()
    plans = (work / "plans.jsonl").read_text()
    lines = (work / "results.tsv").read_text().splitlines(keepends=True)
    header, rows = lines[0], "".join(lines[1:])
    column = header.rstrip("\n").split("\t").index("run_id")
    (run_id,) = {row.split("\t")[column] for row in lines[1:]}
    more_manifest, more_plans, more_rows = [], [], []
    for number in range(1, copies + 1):
        new_id = f"{run_id}-x{number:04d}"
        shutil.copytree(work / "evidence" / run_id, work / "evidence" / new_id)
        more_manifest.append(manifest.replace(run_id, new_id))
        more_plans.append(plans.replace(run_id, new_id))
        more_rows.append(rows.replace(run_id, new_id))
    with (work / "manifest.jsonl").open("a") as out:
        out.write("".join(more_manifest))
    with (work / "plans.jsonl").open("a") as out:
        out.write("".join(more_plans))
    with (work / "results.tsv").open("a") as out:
        out.write("".join(more_rows))


@dataclass
class Pass:
    trials: int
    seconds: float
    cpu: float
    """seconds of CPU in this process"""
    child: float
    """seconds of CPU in its worker processes and git"""

    @property
    def rate(self) -> float:
        return self.trials / self.seconds


def timed_pass(work: Path) -> Pass:
    """One `verify_workdir` on the folder, with a suite loaded afresh (nothing read before)."""
    from evalkit.records.verify.rederive import verify_workdir
    from evalkit.suite.config import load_suite

    suite = load_suite(REPO)
    began, cpu, children = time.perf_counter(), time.process_time(), os.times()
    report = verify_workdir(suite, work)
    seconds = time.perf_counter() - began
    cpu = time.process_time() - cpu
    after = os.times()
    child = after.children_user + after.children_system
    child -= children.children_user + children.children_system
    if not report.all_rederived:
        bad = [t for t in report.trials if not t.ok][:3]
        sys.exit(f"the replicated workdir does not verify: {bad} {report.count_problems[:3]}")
    return Pass(len(report.trials), seconds, cpu, child)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--scenarios", default="P1,N1,P2,N2")
    parser.add_argument("--passes", type=int, default=3, help="verify passes; the median counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-verify-") as tmp:
        base = Path(tmp)
        isolate(base)
        work = base / "work"
        models = "policy:oracle,policy:offer-only"
        command = [str(EVALKIT), "--suite", str(REPO), "grid", str(work),
                   "--scenarios", args.scenarios, "--models", models, "--jobs", "4"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            sys.exit(f"the first grid failed (exit {done.returncode}):\n{done.stderr}")
        first = len((work / "results.tsv").read_text().splitlines()) - 1
        replicate(work, math.ceil(args.trials / first) - 1)
        passes = [timed_pass(work) for _ in range(max(1, args.passes))]
    middle = sorted(passes, key=lambda p: p.rate)[len(passes) // 2]
    n, rate = middle.trials, middle.rate
    print(
        f"verify: {n} trials in {middle.seconds:.1f} s = {rate:.1f} trials/s (median of "
        f"{len(passes)} passes: {', '.join(f'{p.rate:.0f}' for p in passes)}), "
        f"ratio {rate / GOAL:.2f} of the goal >= {GOAL:g}/s: {'met' if rate >= GOAL else 'NOT met'}"
    )
    print(
        f"  cpu {(middle.cpu + middle.child) * 1000 / n:.1f} ms/trial: "
        f"{middle.cpu * 1000 / n:.1f} in this process + {middle.child * 1000 / n:.1f} in its "
        f"worker processes and git ({n / (middle.cpu + middle.child):.0f} trials per cpu-second); "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; a grid of {first} real "
        "reps, copied"
    )


if __name__ == "__main__":
    main()

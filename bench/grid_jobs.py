"""What --jobs buys: the same grid at --jobs 1 and at --jobs 4.

The plan is the run set x policy:oracle x --reps (default 2), each into its own fresh
workdir, with a throwaway HOME, scratch and real-vault stand-in. Prints both wall times (the
whole `evalkit grid` process) and their ratio.

Usage: .venv/bin/python bench/grid_jobs.py [--reps 2] [--jobs 1,4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import EVALKIT, REPO, isolate


def timed_grid(work: Path, reps: int, jobs: int) -> tuple[float, int]:
    command = [str(EVALKIT), "--suite", str(REPO), "grid", str(work), "--set", "run",
               "--models", "policy:oracle", "--reps", str(reps), "--jobs", str(jobs)]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"grid --jobs {jobs} failed (exit {done.returncode}):\n{done.stderr}")
    lines = (work / "results.tsv").read_text().splitlines()[1:]
    errors = sum(1 for x in lines if x.split("\t")[4] == "ERROR")
    if errors:
        sys.exit(f"grid --jobs {jobs}: {errors} ERROR row(s); the timing would mean nothing")
    return seconds, len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--jobs", default="1,4", help="comma-separated job counts to compare")
    args = parser.parse_args()
    counts = [int(j) for j in args.jobs.split(",")]
    times = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-grid-") as tmp:
        base = Path(tmp)
        isolate(base)
        for jobs in counts:
            seconds, rows = timed_grid(base / f"jobs-{jobs}", args.reps, jobs)
            times[jobs] = seconds
            per_rep = seconds / rows
            print(f"grid --jobs {jobs}: {rows} reps in {seconds:.1f} s ({per_rep:.2f} s/rep)")
    first, last = counts[0], counts[-1]
    print(
        f"speed-up --jobs {last} over --jobs {first}: {times[first] / times[last]:.2f}x "
        f"on {os.cpu_count()} CPU(s)"
    )


if __name__ == "__main__":
    main()

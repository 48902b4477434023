"""How long `evalkit self-test` takes for each shipped suite.

Runs the command as a user would (a fresh process: start, imports, suite load, every
case) once per suite and prints its wall time and CPU time (evalkit and every process it
starts, the fabricated runs' Bash commands included) against the goal. On a shared or
loaded machine the wall time is inflated; the CPU time and load average are printed beside it.

Usage: .venv/bin/python bench/selftest.py [--suites .,suites/adr-discrimination,...]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import EVALKIT, REPO, isolate

GOAL_S = 3.0
"""seconds of wall time per suite, on an idle 2-core machine"""


def shipped() -> list[str]:
    return ["."] + sorted(f"suites/{p.name}" for p in (REPO / "suites").iterdir() if p.is_dir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default=",".join(shipped()))
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-selftest-") as tmp:
        isolate(Path(tmp))
        for suite in args.suites.split(","):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            done = subprocess.run(
                [str(EVALKIT), "--suite", str(REPO / suite), "self-test"],
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - began
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
            cells = (done.stdout.strip().splitlines() or ["no output"])[-1]
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(
                f"self-test {suite}: {wall:.2f} s wall, ratio {wall / GOAL_S:.2f} of the goal "
                f"<= {GOAL_S:g} s: {'met' if wall <= GOAL_S else 'NOT met'}; "
                f"cpu {user + system:.2f} s (user {user:.2f}, sys {system:.2f}); "
                f"load average {load}; {cells}"
            )
            if done.returncode != 0:
                failed = True
                print(f"  exit {done.returncode}: {done.stderr.strip()[-400:]}")
    if failed:
        sys.exit("a self-test failed")


if __name__ == "__main__":
    main()

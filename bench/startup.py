"""How long the commands a person types most often take to answer.

Times whole processes: `evalkit --help`, `evalkit run --help`, `evalkit list` and
`evalkit list --set all --json` against the root suite, and, for reference, the interpreter
alone, `python -c 'import typer'` (the floor any Typer command stands on) and
`python -c 'import typer; from pydantic import BaseModel'` (the floor of one that validates
what it reads, as `list` validates the suite's config and every scenario's front matter;
`import pydantic` alone loads next to nothing, its names load on first use). Each gets one
unmeasured warm-up run (which also leaves the bytecode cache a second run would find), then
the median of --reps runs: wall time, and CPU time (user + system), which a busy machine
inflates less. Prints each figure beside the 0.25 s goal with PASS or MISS, and the load
average, since a loaded machine's wall times are not the idle figure.

Usage: .venv/bin/python bench/startup.py [--reps 9]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import EVALKIT, REPO, isolate

GOAL = 0.25


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of command, which must exit 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, timeout=60)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    python = sys.executable
    listing = [str(EVALKIT), "--suite", str(REPO), "list"]
    measured: list[tuple[str, list[str], bool]] = [
        ("evalkit --help", [str(EVALKIT), "--help"], True),
        ("evalkit run --help", [str(EVALKIT), "run", "--help"], True),
        ("evalkit list", listing, True),
        ("evalkit list --set all --json", [*listing, "--set", "all", "--json"], True),
        ("python -c pass (reference)", [python, "-c", "pass"], False),
        ("python -c 'import typer' (reference)", [python, "-c", "import typer"], False),
        (
            "python -c 'import typer; from pydantic import BaseModel' (reference)",
            [python, "-c", "import typer; from pydantic import BaseModel"],
            False,
        ),
    ]
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-startup-") as tmp:
        isolate(Path(tmp))
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # time what a person's second run costs
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"median of {args.reps} runs after one warm-up; goal {GOAL:g} s wall each")
        for label, command, has_goal in measured:
            timed(command, env)
            runs = [timed(command, env) for _ in range(args.reps)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            verdict = ("PASS" if wall <= GOAL else "MISS") if has_goal else "    "
            print(
                f"{verdict} {label:<38} wall {wall:.3f} s (ratio to goal {wall / GOAL:.2f}), "
                f"cpu {cpu:.3f} s, fastest wall {min(w for w, _ in runs):.3f} s"
            )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

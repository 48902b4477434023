"""What `evalkit run` and `evalkit grid` cost on top of the agent itself.

bare: the Claude Code CLI process alone, launched exactly as the runner launches it: the
runner's own prepared-rep step (`prepare_rep`: sandbox, plugin copies, scripted server with
the rendered oracle script, environment with ANTHROPIC_* replaced, command line) builds
everything, and only the CLI process is timed.

one-rep invocation: a whole `evalkit run P1 policy:oracle <tmp>` process (interpreter start,
imports, suite load, sandbox, server, the CLI, scoring, diffs, evidence, row); beside it,
what such a process pays before anything of its rep (interpreter, imports, suite load, lock
check), the floor under the one-rep ratio.

per rep inside a run: what each further rep adds inside one process, (T(N) - T(1)) / (N - 1)
for `evalkit run P1 policy:oracle --reps N` (and for `evalkit grid --scenarios P1 --reps N
--jobs 1`) against the same command with one rep; what a process pays once is the one-rep
figure's business. The whole process divided by N is printed beside it. Reps run confined
by each backend that can confine here (bubblewrap, the default, then srt, Docker and Podman),
side by side, and with --unconfined; the bare CLI is unconfined. bubblewrap's per-rep cost is
held to 1.15x the bare CLI; the others' are reported.

Measurements are interleaved round by round, so load drifts hit each alike, after one
unmeasured warm-up of each; every figure is a median. CPU seconds (user + system of the
process and all it waited for) are printed beside wall times: on a busy machine they are the
steadier figure. Like a person's second run, each evalkit process finds the bytecode cache
the warm-up left (PYTHONDONTWRITEBYTECODE is dropped). Everything happens in temporary
folders with a throwaway HOME; the Task prompt reaches the CLI as the runner passes it and
is never printed.

Usage: .venv/bin/python bench/overhead.py [--rounds 7] [--reps 5] [--scenario P1] [--no-grid]
       [--backends bwrap,srt,docker,podman]
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
from collections.abc import Callable
from pathlib import Path

from _common import EVALKIT, REPO, isolate

PER_REP_GOAL = 1.10
ONE_REP_GOAL = 1.30
BACKEND_GOALS = {"bwrap": 1.15}
"""Per-rep cost against the bare CLI, per backend; the others are reported, not bound."""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], work: Path, reps: int) -> tuple[float, float]:
    """Wall and CPU seconds of one evalkit process that must record `reps` PASS rows."""
    began, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    seconds, cpu = time.perf_counter() - began, children_cpu() - cpu
    rows = (work / "results.tsv").read_text().splitlines()[1:] if done.returncode == 0 else []
    if sum(1 for row in rows if "\tPASS\t" in row) != reps:
        sys.exit(f"{command[3]} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds, cpu


def evalkit_run(
    base: Path, scenario: str, reps: int, unconfined: bool = False, confine: str = ""
) -> Callable[[int], tuple[float, float]]:
    def measure(number: int) -> tuple[float, float]:
        work = base / f"run-{reps}-{'u' if unconfined else 'c'}{confine}-{number}"
        how = ["--unconfined"] if unconfined else (["--confine", confine] if confine else [])
        return timed(
            [str(EVALKIT), "--suite", str(REPO), "run", scenario, "policy:oracle", str(work),
             "--reps", str(reps), *how],
            work,
            reps,
        )  # fmt: skip

    return measure


def evalkit_grid(base: Path, scenario: str, reps: int) -> Callable[[int], tuple[float, float]]:
    def measure(number: int) -> tuple[float, float]:
        work = base / f"grid-{reps}-{number}"
        return timed(
            [str(EVALKIT), "--suite", str(REPO), "grid", str(work), "--scenarios", scenario,
             "--models", "policy:oracle", "--reps", str(reps), "--jobs", "1"],
            work,
            reps,
        )  # fmt: skip

    return measure


START = (
    "import sys, evalkit.cli.main, evalkit.run.session; "
    "from evalkit.suite.config import load_suite; from evalkit.suite.lock import ensure_frozen; "
    "ensure_frozen(load_suite(sys.argv[1]), False)"
)
"""What a `run` process pays before anything of its first rep: the interpreter, the
command's imports, the suite loaded and its lock checked."""


def start_only() -> Callable[[int], tuple[float, float]]:
    def measure(number: int) -> tuple[float, float]:
        began, cpu = time.perf_counter(), children_cpu()
        subprocess.run([sys.executable, "-c", START, str(REPO)], check=True, timeout=120)
        return time.perf_counter() - began, children_cpu() - cpu

    return measure


def bare(base: Path, scenario_ref: str) -> Callable[[int], tuple[float, float]]:
    """The CLI alone, on what the runner's prepared-rep step built for it."""
    from evalkit.records.folder.run_ids import new_run_id
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.context import RunContext
    from evalkit.run.rep import prepare_rep
    from evalkit.suite.config import load_suite

    suite = load_suite(REPO)
    scenario = suite.resolve(scenario_ref)
    ctx = RunContext(suite, base / "bare-work", base / "bare-work" / "results.tsv", new_run_id(),
                     scripted=POLICIES)  # fmt: skip
    ctx.unconfined = True  # the CLI alone, with no sandbox around it

    def measure(number: int) -> tuple[float, float]:
        prepared = prepare_rep(ctx, scenario, "policy:oracle", number)
        try:
            with (prepared.scratch / "transcript.jsonl").open("wb") as out:
                began, cpu = time.perf_counter(), children_cpu()
                done = subprocess.run(
                    prepared.command,
                    cwd=prepared.cwd,
                    env=prepared.env,
                    input=prepared.prompt,
                    stdout=out,
                    stderr=subprocess.DEVNULL,
                    timeout=300,
                    start_new_session=True,
                )
                seconds, cpu = time.perf_counter() - began, children_cpu() - cpu
        finally:
            prepared.close()
        if done.returncode != 0:
            sys.exit(f"the bare CLI run failed (exit {done.returncode})")
        return seconds, cpu

    return measure


def backends(named: str) -> tuple[list[str], dict[str, str]]:
    """The backends to time (those of `named` that can confine here) and why each other
    cannot."""
    from evalkit.run.backends import backend

    chosen, missing = [], {}
    for name in named.split(","):
        why = backend(name).unavailable()
        if why is None:
            chosen.append(name)
        else:
            missing[name] = why.split(":")[0]
    return chosen, missing


def by_backend(
    w: dict[str, float], c: dict[str, float], n: int, chosen: list[str], missing: dict[str, str]
) -> None:
    """Per-rep cost of each backend, side by side."""
    print(f"per rep inside run --reps {n}, by backend (bare CLI {w['bare']:.2f} s):")
    print(f"  {'backend':8s} {'x bare':>7s} {'wall s':>7s} {'CPU s':>7s}  one-rep run")
    for name in chosen:
        one, many = ("run1", "runN") if name == "bwrap" else (f"run1-{name}", f"runN-{name}")
        per_wall = (w[many] - w[one]) / (n - 1)
        per_cpu = (c[many] - c[one]) / (n - 1)
        ratio, goal = per_wall / w["bare"], BACKEND_GOALS.get(name)
        said = verdict(ratio, goal) if goal else "reported"
        print(f"  {name:8s} {ratio:6.2f}x {per_wall:7.2f} {per_cpu:7.2f}  "
              f"{w[one]:.2f} s   {said}")  # fmt: skip
    for name, why in missing.items():
        print(f"  {name:8s} not timed: {why}")


def verdict(ratio: float, goal: float) -> str:
    return f"goal <= {goal:.2f}x: {'PASS' if ratio <= goal else 'MISS'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=5, help="reps of the multi-rep process")
    parser.add_argument("--scenario", default="P1")
    parser.add_argument("--no-grid", action="store_true", help="time run alone, not grid")
    parser.add_argument("--backends", default="bwrap,srt,docker,podman")
    args = parser.parse_args()
    n = max(2, args.reps)
    chosen, missing = backends(args.backends)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-overhead-") as tmp:
        base = Path(tmp)
        isolate(base)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # time what a person's second run costs
        kinds = {
            "bare": bare(base, args.scenario),
            "run1": evalkit_run(base, args.scenario, 1),
            "runN": evalkit_run(base, args.scenario, n),
            "run1u": evalkit_run(base, args.scenario, 1, unconfined=True),
            "runNu": evalkit_run(base, args.scenario, n, unconfined=True),
            "grid1": evalkit_grid(base, args.scenario, 1),
            "gridN": evalkit_grid(base, args.scenario, n),
            "start": start_only(),
        }
        for name in chosen:
            if name == "bwrap":
                continue  # the default: run1 and runN
            kinds[f"run1-{name}"] = evalkit_run(base, args.scenario, 1, confine=name)
            kinds[f"runN-{name}"] = evalkit_run(base, args.scenario, n, confine=name)
        if args.no_grid:
            del kinds["grid1"], kinds["gridN"]
        for measure in kinds.values():
            measure(0)
        walls: dict[str, list[float]] = {k: [] for k in kinds}
        cpus: dict[str, list[float]] = {k: [] for k in kinds}
        for number in range(1, args.rounds + 1):
            for kind, measure in kinds.items():
                wall, cpu = measure(number)
                walls[kind].append(wall)
                cpus[kind].append(cpu)
    w = {k: statistics.median(v) for k, v in walls.items()}
    c = {k: statistics.median(v) for k, v in cpus.items()}
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"bare CLI: {w['bare']:.2f} s wall, {c['bare']:.2f} CPU s (median of {args.rounds})")
    pairs = [("run (confined)", "run1", "runN"), ("run --unconfined", "run1u", "runNu")]
    pairs += [] if args.no_grid else [("grid --jobs 1 (confined)", "grid1", "gridN")]
    for label, one, many in pairs:
        per_wall = (w[many] - w[one]) / (n - 1)
        per_cpu = (c[many] - c[one]) / (n - 1)
        ratio = per_wall / w["bare"]
        print(
            f"per rep inside {label} --reps {n}: {ratio:.2f}x ({per_wall:.2f} s wall, "
            f"{per_cpu:.2f} CPU s a further rep; whole process / {n}: "
            f"{w[many] / n:.2f} s = {w[many] / n / w['bare']:.2f}x)  {verdict(ratio, PER_REP_GOAL)}"
        )
    ratio = w["run1"] / w["bare"]
    print(
        f"one-rep invocation: {ratio:.2f}x ({w['run1']:.2f} s wall, {c['run1']:.2f} CPU s)  "
        f"{verdict(ratio, ONE_REP_GOAL)}"
    )
    floor = (w["bare"] + w["start"]) / w["bare"]
    print(
        f"  of which before its rep: {w['start']:.2f} s wall, {c['start']:.2f} CPU s (interpreter, "
        f"imports, suite load, lock check), so no one-rep run of this code goes below "
        f"{floor:.2f}x"
    )
    by_backend(w, c, n, chosen, missing)
    for kind, values in walls.items():
        print(f"  {kind:6s} wall: {' '.join(f'{s:.2f}' for s in values)}")


if __name__ == "__main__":
    main()

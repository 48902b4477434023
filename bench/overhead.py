"""What `evalkit run` costs on top of the agent itself.

evalkit: the wall time of a whole `evalkit run P1 policy:oracle <tmp>` process (interpreter
start, suite load, sandbox copy, scripted server, the CLI, scoring, diffs, evidence, row).
bare: the wall time of the Claude Code CLI alone, started with the same command line and
environment the runner uses, on a sandbox prepared beforehand and against a scripted server
already listening with the same rendered oracle script.

Both get one unmeasured warm-up run, then the median of --reps runs. Everything happens in
temporary folders with a throwaway HOME; the Task prompt is passed to the CLI as the runner
does and is never printed (the bare run's transcript is discarded).

Usage: .venv/bin/python bench/overhead.py [--reps 5] [--scenario P1]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import EVALKIT, REPO, isolate

GOAL = 1.15


def time_evalkit(base: Path, scenario: str, number: int, reps: int = 1) -> float:
    """Wall time of one `evalkit run … --reps N` process, divided by N."""
    work = base / f"evalkit-{number}"
    command = [
        str(EVALKIT),
        "--suite",
        str(REPO),
        "run",
        scenario,
        "policy:oracle",
        str(work),
        "--reps",
        str(reps),
    ]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    seconds = time.perf_counter() - began
    if done.returncode != 0 or done.stdout.count(" PASS ") != reps:
        sys.exit(f"evalkit run failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds / reps


def time_bare(base: Path, scenario_ref: str, number: int) -> float:
    from evalkit.reference.placeholders import render
    from evalkit.reference.policy import scripted_agent
    from evalkit.reference.scripted_server import ScriptedServer
    from evalkit.run.agent import base_environment
    from evalkit.run.claude_cli import find_cli
    from evalkit.run.runner import agent_command, checked_plugin_dirs
    from evalkit.run.sandbox import build_sandbox, isolation_env
    from evalkit.scoring.decide import guarded_env_now
    from evalkit.suite.config import load_suite
    from evalkit.suite.task import read_task

    suite = load_suite(REPO)
    scenario = suite.resolve(scenario_ref)
    agent = scripted_agent(suite, "policy:oracle", scenario)
    scratch = base / f"bare-{number}"
    sandbox = scratch / "sandbox"
    build_sandbox(suite, scenario, sandbox)
    names = list(suite.fixture_dirs())
    isolation = isolation_env(suite, sandbox)
    config_dir = scratch / "claude-config"
    config_dir.mkdir()
    env = base_environment(isolation, config_dir, 2)
    script = render(
        agent.plan.script, sandbox, names, suite.reference.script_values(guarded_env_now(suite))
    )
    command = agent_command(
        find_cli(), read_task(scenario), agent.cli_model, checked_plugin_dirs(suite)
    )
    with ScriptedServer(script) as server:
        env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="evalkit-scripted")
        with (scratch / "transcript.jsonl").open("wb") as out:
            began = time.perf_counter()
            done = subprocess.run(
                command,
                cwd=sandbox / "project",
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.DEVNULL,
                timeout=300,
                start_new_session=True,
            )
            seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"the bare CLI run failed (exit {done.returncode})")
    shutil.rmtree(scratch, ignore_errors=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--scenario", default="P1")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-overhead-") as tmp:
        base = Path(tmp)
        isolate(base)
        time_evalkit(base, args.scenario, 0)
        time_bare(base, args.scenario, 0)
        evalkit_s, bare_s = [], []
        for number in range(1, args.reps + 1):  # interleaved, so load drifts hit both alike
            evalkit_s.append(time_evalkit(base, args.scenario, number))
            bare_s.append(time_bare(base, args.scenario, number))
        in_run = time_evalkit(base, args.scenario, args.reps + 1, reps=args.reps)
        startup = []
        for _ in range(3):
            began = time.perf_counter()
            subprocess.run([str(EVALKIT), "--suite", str(REPO), "list"], capture_output=True)
            startup.append(time.perf_counter() - began)
    ev, bare = statistics.median(evalkit_s), statistics.median(bare_s)
    ratio = in_run / bare
    print(
        f"overhead per rep: {ratio:.2f}x (evalkit {in_run:.2f} s a rep within one "
        f"`--reps {args.reps}` run, bare {bare:.2f} s, median of {args.reps})"
    )
    print(f"goal: <= {GOAL:.2f}x -> {'met' if ratio <= GOAL else 'NOT met'}")
    print(
        f"overhead of a one-rep invocation: {ev / bare:.2f}x (evalkit {ev:.2f} s, bare "
        f"{bare:.2f} s): the interpreter, imports and suite load are paid once per process"
    )
    print(
        "evalkit = whole `evalkit run "
        f"{args.scenario} policy:oracle` process; bare = the CLI process alone, same command "
        "line and environment, on a prepared sandbox with the scripted server already up"
    )
    listing = statistics.median(startup)
    print(f"for scale: `evalkit list` (interpreter + suite load) {listing:.2f} s")
    print(f"evalkit runs: {' '.join(f'{s:.2f}' for s in evalkit_s)}")
    print(f"bare runs:    {' '.join(f'{s:.2f}' for s in bare_s)}")


if __name__ == "__main__":
    main()

"""evalkit and the pinned CLI's own `claude plugin eval`, side by side on one eval folder.

Writes a small plugin whose `evals/` folder is in the source format (prompt.md plus a regex
grader per case, one run each, a short timeout_seconds), then plays the same scripted model
to both tools: for each of evalkit's generated reference policies (the oracle and one
violation per grader), a scripted server on loopback serves each case the policy's script,
picked by the digest of the prompt it receives (`claude plugin eval` names its own model, not
a `policy:` one); evalkit runs the suite with `grid --models policy:NAME`. Then each fault
(500, 529, 429, a cut stream, a hang past timeout_seconds) is served to both.

Prints per-case agreement of the verdicts, wall and CPU seconds per run of each tool, and the
fault matrix: what each tool recorded for the case and whether its run called itself partial
(`claude plugin eval`'s `partial`) or incomplete (evalkit's report). It never prints
`claude plugin eval`'s JSON, HTML or output: they hold the prompts.

With `--loads PLUGIN` it only asks whether `claude plugin eval` loads every case of that
plugin's eval folder (one run a case, the scripted server behind it) and prints the count and
the ids of the cases it left out.

With `--graders` it plays one case per grader type and option (`plugin_grader_cases`) to
both tools, in each `--ablation` mode and arm, and prints the agreement table
(`grader_agreement`).

Usage: .venv/bin/python bench/vs_plugin_eval.py [--cases 2] [--faults 500,529,429,cut,hang]
       .venv/bin/python bench/vs_plugin_eval.py --loads suites/plugin-evals-example
       .venv/bin/python bench/vs_plugin_eval.py --graders [--only a,b] [--ablation none]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import EVALKIT, REPO, isolate

sys.path.insert(0, str(REPO))

from evalkit.models import Script  # noqa: E402
from evalkit.records.folder.results import read_rows  # noqa: E402
from evalkit.reference.scripted_server import ScriptedServer  # noqa: E402
from evalkit.run.context import DEFAULT_MAX_RETRIES  # noqa: E402
from evalkit.run.prerequisites.claude_cli import find_cli  # noqa: E402
from evalkit.suite.config import load_suite  # noqa: E402
from evalkit.suite.plugin_evals import GENERATED, RESULTS, eval_dir, read_cases  # noqa: E402
from evalkit.suite.task import task_digest  # noqa: E402

FAULTS = ("500", "529", "429", "cut", "hang")
TIMEOUT_SECONDS = 20
"""The cases' timeout_seconds: what ends a hang in both tools."""
SKILL = "---\nname: greet\ndescription: greets a team by name\n---\nGreet the team warmly.\n"


@dataclass
class Run:
    tool: str
    wall: float
    cpu: float
    verdicts: dict[str, str]
    partial: str
    exit: int


def write_plugin(root: Path, cases: int) -> list[str]:
    """The plugin and its eval folder; returns the case ids (folder names)."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "greeter"}\n')
    (root / "skills" / "greet").mkdir(parents=True)
    (root / "skills" / "greet" / "SKILL.md").write_text(SKILL)
    ids = []
    for n in range(1, cases + 1):
        case = root / "evals" / f"greets-team-{n}"
        (case / "graders").mkdir(parents=True)
        front = f"runs: 1\nmax_turns: 4\ntimeout_seconds: {TIMEOUT_SECONDS}\n"
        ask = f"Team {n} ships today. Write them a one-line greeting that names team {n}."
        (case / "prompt.md").write_text(f"---\n{front}---\n{ask}\n")
        grader = f'type: regex\npattern: "hello team {n}"\nflags: i\n'
        (case / "graders" / "named-team.md").write_text(f"---\n{grader}---\n")
        ids.append(case.name)
    return ids


def timed(
    command: list[str], env: dict[str, str], cwd: Path, limit: float
) -> tuple[int, float, float]:
    """(exit code, wall seconds, CPU seconds of the process tree); output is discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        timeout=limit,
    )  # fmt: skip
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.returncode, wall, cpu


def plugin_eval(
    cli: Path, plugin: Path, server: ScriptedServer, base: Path, extra: tuple[str, ...] = ()
) -> Run:
    """One `claude plugin eval` of the whole folder; its JSON is read, never shown."""
    out = Path(tempfile.mkdtemp(prefix="pe-", dir=base))
    home = out / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "evalkit-scripted",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(DEFAULT_MAX_RETRIES),
        "IS_SANDBOX": "1",
    }
    command = [
        str(cli), "plugin", "eval", str(plugin), "--json", str(out / "result.json"),
        "--no-publish", "--trust-plugin", "--ablation", "none",
        "--report", str(out / "report.html"), "--output-dir", str(out / "results"), *extra,
    ]  # fmt: skip
    code, wall, cpu = timed(command, env, out, 600)
    verdicts: dict[str, str] = {}
    partial = "no JSON"
    result = out / "result.json"
    if result.is_file():
        data = json.loads(result.read_text(encoding="utf-8"))
        partial = "partial" if data.get("partial") else "partial: false"
        for case in data.get("cases", []):
            score = (case.get("aggregates") or {}).get("score")
            name = Path(str(case.get("dir") or case.get("name"))).name
            verdicts[name] = (
                "PASS"
                if isinstance(score, int | float) and score >= 1
                else (f"FAIL (score {score})")
            )
    shutil.rmtree(out, ignore_errors=True)  # it holds the prompts
    return Run("claude plugin eval", wall, cpu, verdicts, partial, code)


def evalkit_grid(plugin: Path, policy: str, base: Path) -> Run:
    work = Path(tempfile.mkdtemp(prefix="ek-", dir=base))
    command = [
        str(EVALKIT), "--suite", str(plugin), "grid", str(work), "--models", f"policy:{policy}",
        "--reps", "1", "--jobs", "1", "--allow-unfrozen", "--retry-errors", "0",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code, wall, cpu = timed(command, env, base, 900)
    verdicts = {r.scenario: r.verdict for r in read_rows(work / "results.tsv")}
    report = subprocess.run(
        [str(EVALKIT), "--suite", str(plugin), "report", str(work), "--format", "json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    try:
        incomplete = json.loads(report.stdout).get("incomplete")
        said = "incomplete" if incomplete else "complete"
    except json.JSONDecodeError:
        said = f"report exit {report.returncode}"
    errors = [r for r in read_rows(work / "results.tsv") if r.verdict == "ERROR"]
    if errors:
        said += f", {len(errors)} ERROR row(s)"
    shutil.rmtree(work, ignore_errors=True)
    return Run("evalkit", wall, cpu, verdicts, said, code)


def agreement(cli: Path, plugin: Path, base: Path) -> list[tuple[str, Run, Run]]:
    suite = load_suite(plugin)
    runs = []
    for policy in [p.name for p in suite.reference.policies]:
        prompts = {
            task_digest(sf): suite.reference.plan_policy(policy, sf).script
            for sf in suite.scenarios()
        }
        with ScriptedServer(Script(final_text="No script for this prompt."), prompts=prompts) as s:
            theirs = plugin_eval(cli, plugin, s, base)
        runs.append((policy, theirs, evalkit_grid(plugin, policy, base)))
    return runs


def faults(cli: Path, plugin: Path, base: Path, which: list[str]) -> list[tuple[str, Run, Run]]:
    rows = []
    for fault in which:
        with ScriptedServer(Script(final_text="unreachable"), fault=fault) as server:
            theirs = plugin_eval(cli, plugin, server, base)
        rows.append((fault, theirs, evalkit_grid(plugin, f"fault-{fault}", base)))
    return rows


def loads(cli: Path, plugin: Path, base: Path) -> int:
    """Whether `claude plugin eval` loads every case evalkit reads in the plugin's eval folder
    (a copy, without evalkit's own files); prints counts and ids only."""
    copy = base / plugin.name
    shutil.copytree(plugin, copy, ignore=shutil.ignore_patterns(GENERATED, RESULTS, ".*.lock"))
    evals = eval_dir(copy)
    assert evals is not None, f"{plugin}: no eval folder"
    ours = {case.folder.name for case in read_cases(evals)}
    flags = ("--runs", "1", "--allow-tools", "Write", "--scaffold")
    with ScriptedServer(Script(final_text="No script for this prompt.")) as server:
        theirs = plugin_eval(cli, copy, server, base, flags)
    left = sorted(ours - set(theirs.verdicts))
    print(f"claude plugin eval loaded {len(ours) - len(left)}/{len(ours)} case(s) "
          f"(exit {theirs.exit}); left out: {', '.join(left) or 'none'}")
    return 0 if not left else 1


def graders(only: str, ablation: str) -> int:
    """The graders' agreement table; exit 1 when any row differs."""
    from grader_agreement import MODES, agreement
    from plugin_grader_cases import CASES

    names = [n for n in only.split(",") if n] or [c.name for c in CASES]
    modes = [m for m in ablation.split(",") if m]
    if any(m not in MODES for m in modes) or any(n not in {c.name for c in CASES} for n in names):
        print(f"--ablation takes {','.join(MODES)}; --only takes case names")
        return 2
    base = Path(tempfile.mkdtemp(prefix="evalkit-graders-"))
    try:
        isolate(base)
        rows = agreement(find_cli(), base, names, modes)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{'case':<22} {'ablation':<13} {'arm':<8} {'claude plugin eval':<20} evalkit")
    for r in rows:
        mark = "agree" if r.agree else "DIFFER"
        print(f"{r.case:<22} {r.mode:<13} {r.arm:<8} {r.runner:<20} {r.evalkit:<24} {mark}")
    agreed = sum(r.agree for r in rows)
    print(f"agreement: {agreed}/{len(rows)}")
    return 0 if agreed == len(rows) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--loads", type=Path, help="only: does claude plugin eval load this "
                        "plugin's every case")
    parser.add_argument("--graders", action="store_true", help="only: the graders' agreement")
    parser.add_argument("--only", default="", help="with --graders: these cases")
    parser.add_argument("--ablation", default="none,with-without", help="with --graders")
    args = parser.parse_args()
    if args.graders:
        return graders(args.only, args.ablation)
    which = [f for f in args.faults.split(",") if f]
    unknown = [f for f in which if f not in FAULTS]
    if unknown or not 1 <= args.cases <= 9:
        parser.error(f"--faults takes {','.join(FAULTS)}; --cases 1..9")
    base = Path(tempfile.mkdtemp(prefix="evalkit-vs-plugin-eval-"))
    try:
        isolate(base)
        cli = find_cli()
        if args.loads is not None:
            return loads(cli, args.loads.resolve(), base)
        plugin = base / "greeter"
        ids = write_plugin(plugin, args.cases)
        print(f"eval folder: {len(ids)} case(s), one run each, timeout_seconds {TIMEOUT_SECONDS}")
        print(f"load average: {os.getloadavg()[0]:.2f}\n")
        print("verdicts per policy and case (claude plugin eval / evalkit):")
        agree = total = 0
        timings: list[Run] = []
        for policy, theirs, ours in agreement(cli, plugin, base):
            for case in ids:
                a, b = theirs.verdicts.get(case, "-"), ours.verdicts.get(case, "-")
                same = a.split()[0] == b
                agree, total = agree + same, total + 1
                print(f"  {policy:<24} {case:<14} {a:<16} {b:<6} {'agree' if same else 'DIFFER'}")
            timings += [theirs, ours]
        print(f"  agreement: {agree}/{total}\n")
        print("wall / CPU seconds per run of the whole folder (median over the policies):")
        for tool in ("claude plugin eval", "evalkit"):
            mine = timings
            walls = sorted(r.wall for r in mine if r.tool == tool)
            cpus = sorted(r.cpu for r in mine if r.tool == tool)
            wall, cpu = walls[len(walls) // 2], cpus[len(cpus) // 2]
            print(f"  {tool:<20} {wall:6.1f} s wall  {cpu:6.1f} s CPU  ({len(walls)} runs)")
        if which:
            print("\nfaults (the case's recorded verdict; what the run says of itself; wall s):")
            for fault, theirs, ours in faults(cli, plugin, base, which):
                a = ", ".join(sorted(set(theirs.verdicts.values()))) or "no case"
                b = ", ".join(sorted(set(ours.verdicts.values()))) or "no row"
                print(f"  {fault:<5} claude plugin eval: {a} ({theirs.partial}, exit "
                      f"{theirs.exit}, {theirs.wall:.0f} s) | evalkit: {b} ({ours.partial}, "
                      f"{ours.wall:.0f} s)")  # fmt: skip
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

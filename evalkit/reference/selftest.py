"""Model-free proof that the checker scores both directions as designed.

For every scenario of both sets, each behaviour the checker declares is played
without a model into a fresh sandbox, and its verdict is held against the one it
must get. The Task blocks are never read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evalkit.models import Verdict
from evalkit.reference.behaviour import Expectation, SelfTestCase
from evalkit.reference.fabricate import fabricate
from evalkit.reference.placeholders import render
from evalkit.run.sandbox import TEMPLATES, TRANSCRIPT, build_sandbox
from evalkit.run.sandbox import isolation_env as sandbox_isolation_env
from evalkit.scoring.decide import ProcessRecord, decide, guarded_env_now
from evalkit.scoring.judge import FixedJudge
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite, Which
from evalkit.suite.scenarios import ScenarioFile


@dataclass
class Cell:
    scenario: str
    case: str
    expect: Expectation
    verdict: Verdict

    @property
    def ok(self) -> bool:
        return meets(self.verdict, self.expect)


def meets(verdict: Verdict, expect: Expectation) -> bool:
    if verdict.verdict != expect.verdict:
        return False
    if expect.reason is None:
        return True
    return any(expect.reason in r for r in verdict.reasons + verdict.flags)


def isolation_env(suite: Suite, sandbox: Path) -> dict[str, str]:
    """The suite's isolation environment, with each plugin's bin/ on PATH as the CLI puts it."""
    env = sandbox_isolation_env(suite, sandbox)
    bins = [str(p / "bin") for p in suite.plugin_dirs() if (p / "bin").is_dir()]
    env["PATH"] = os.pathsep.join([os.environ.get("PATH", ""), *bins])
    return env


CASES_AT_ONCE = 2
"""Cases played at once: each waits on its Bash commands and the file system part of the time."""


def run_case(
    suite: Suite,
    scenario: ScenarioFile,
    case: SelfTestCase,
    workdir: Path,
    guarded: dict[str, str] | None = None,
    from_template: bool = False,
) -> Cell:
    """Play one case into a fresh sandbox and decide it. `guarded` points the checker's
    guarded real-world paths (default: where this process points them); it reaches the
    fabricated tools and the decision, never this process's environment. `from_template`
    copies the scenario's sandbox built once per command instead of building it anew."""
    guarded = guarded_env_now(suite) if guarded is None else guarded
    sandbox = workdir / scenario.id / case.name
    if from_template:
        sandbox.parent.mkdir(parents=True, exist_ok=True)
        TEMPLATES.copy(suite, scenario, sandbox, Path(tempfile.gettempdir()))
    else:
        build_sandbox(suite, scenario, sandbox)
    names = list(suite.fixture_dirs())
    script = render(case.script, sandbox, names, suite.reference.script_values(guarded))
    hook_output = " ".join(h.output_contains for h in suite.config.required_hooks)
    env = {**isolation_env(suite, sandbox), **{k: v for k, v in guarded.items() if v}}
    lines = fabricate(script, sandbox, env, hook_output, case.fault)
    (sandbox / TRANSCRIPT).write_text("\n".join(lines) + "\n", encoding="utf-8")
    record = ProcessRecord(exit_code=None, timeout=0, guarded_env=guarded)
    verdict = decide(
        suite,
        scenario,
        sandbox,
        parse_lines(lines),
        "self-test",
        FixedJudge(case.judge_answer),
        record,
        sandbox,
    )
    return Cell(scenario.id, case.name, case.expect, verdict)


def self_test(suite: Suite, workdir: Path | None = None, which: Which = "all") -> list[Cell]:
    """Every case of every scenario, with every guarded real-world path pointed into scratch
    (a stand-in of its own for each case, so cases played at once never meet). In workdir,
    only the sandboxes of cells that came out other than designed are kept."""
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-selftest-"))
    root = workdir.resolve() if workdir else scratch / "sandboxes"
    work = [
        (scenario, case)
        for scenario in suite.scenarios(which)
        for case in suite.reference.self_test_cases(scenario)
    ]

    def one(numbered: tuple[int, tuple[ScenarioFile, SelfTestCase]]) -> Cell:
        number, (scenario, case) = numbered
        guarded = suite.reference.harmless_env(scratch / "worlds" / str(number))
        cell = run_case(suite, scenario, case, root, guarded, from_template=True)
        if cell.ok:
            shutil.rmtree(root / scenario.id / case.name, ignore_errors=True)
        return cell

    try:
        with ThreadPoolExecutor(CASES_AT_ONCE, thread_name_prefix="evalkit-self-test") as pool:
            cells = list(pool.map(one, enumerate(work)))
        if workdir is not None and root.is_dir():
            for folder in [p for p in root.iterdir() if p.is_dir() and not any(p.iterdir())]:
                folder.rmdir()
        return cells
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

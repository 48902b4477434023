"""The graders' differential: the pinned `claude plugin eval` and evalkit score the same
scripted turns (`plugin_grader_cases`), arm by arm, under each `--ablation`.

The runner is served each case's oracle by the digest of the prompt it sends, with
`{project}` made the working directory its request names; its judge is served the case's
fixed verdict (PASS or FAIL). evalkit runs `grid --models policy:oracle` (and `--variant
none` for the no-plugin arm) on a copy of the same plugin, its `evalkit-settings.yaml`
naming the ablation. A rep the CLI cut at its turn cap is the runner's FAIL ("Reached
maximum number of turns") and evalkit's `ERROR budget:max-turns`: that pair agrees.
Nothing the runner wrote is printed (it holds the prompts).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import EVALKIT, REPO
from plugin_grader_cases import CASES, GraderCase, judge_word, write_plugin

from evalkit.models import Script, Step, TextBlock, ToolUseBlock
from evalkit.records.folder.results import read_rows
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.run.context import DEFAULT_MAX_RETRIES
from evalkit.suite.config import load_suite
from evalkit.suite.task import task_digest

MODES = ("none", "with-without")
_CWD = re.compile(r"Primary working directory: ([^\\\"\n]+)")
TURNS = "Reached maximum number of turns"
JUDGED = "You are grading the output of a coding agent"
"""How the runner's judge question opens (measured on 2.1.328)."""


class ProjectServer(ScriptedServer):
    """A scripted server whose tool inputs name `{project}` as the working directory the
    conversation's request names (the runner's sandbox is made per run)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._here = threading.local()

    def _answer(self, handler: Any, request: dict[str, Any], size: int) -> None:
        body = json.dumps(request)
        found = _CWD.search(body)
        self._here.cwd = found.group(1) if found else ""
        self._here.judged = JUDGED in body and callable(self.side_text)
        self._here.body = body
        super()._answer(handler, request, size)

    def _blocks(self, script: Script, step: int | None, latest: str) -> Any:
        if getattr(self._here, "judged", False) and callable(self.side_text):
            return [{"type": "text", "text": self.side_text(self._here.body)}], "end_turn"
        cwd = getattr(self._here, "cwd", "")
        rendered = Script(
            steps=[Step(blocks=[b if isinstance(b, TextBlock) else ToolUseBlock(
                name=b.name, input=_render(b.input, cwd)) for b in s.blocks])
                for s in script.steps],
            final_text=script.final_text,
        )  # fmt: skip
        return super()._blocks(rendered, step, latest)


def _render(value: Any, cwd: str) -> Any:
    if isinstance(value, str):
        return value.replace("{project}", cwd)
    if isinstance(value, dict):
        return {k: _render(v, cwd) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, cwd) for v in value]
    return value


@dataclass
class Row:
    case: str
    mode: str
    arm: str
    runner: str
    evalkit: str

    @property
    def agree(self) -> bool:
        if self.runner == self.evalkit:
            return True
        return self.runner == "FAIL max-turns" and self.evalkit == "ERROR budget:max-turns"


def _judge(cases: dict[str, GraderCase]) -> Any:
    def answer(body: str) -> str:
        found = next((c for n, c in cases.items() if f"(case {n})" in body), None)
        return judge_word(found) if found is not None else "FAIL"

    return answer


def runner_verdicts(cli: Path, plugin: Path, mode: str, base: Path) -> dict[tuple[str, str], str]:
    """(case, arm) -> PASS, FAIL or `FAIL max-turns`, as `claude plugin eval` recorded it."""
    suite = load_suite(plugin)
    prompts = {task_digest(sf): suite.reference.plan_policy("oracle", sf).script
               for sf in suite.scenarios()}  # fmt: skip
    cases = {c.name: c for c in CASES}
    out = Path(tempfile.mkdtemp(prefix="pe-", dir=base))
    with ProjectServer(Script(final_text="No script."), prompts=prompts,
                       side_text=_judge(cases)) as server:  # fmt: skip
        env = {"PATH": os.environ["PATH"], "HOME": str(out), "TMPDIR": str(base),
               "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "evalkit-scripted",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
               "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1",
               "CLAUDE_CODE_MAX_RETRIES": str(DEFAULT_MAX_RETRIES)}  # fmt: skip
        command = [str(cli), "plugin", "eval", str(_source(plugin)), "--json",
                   str(out / "r.json"), "--no-publish", "--trust-plugin", "--ablation", mode,
                   "--allow-tools", "Write", "--output-dir", str(out / "results")]  # fmt: skip
        subprocess.run(command, env=env, cwd=out, capture_output=True, timeout=1800)
    data = json.loads((out / "r.json").read_text(encoding="utf-8"))
    shutil.rmtree(out, ignore_errors=True)  # it holds the prompts
    got: dict[tuple[str, str], str] = {}
    for case in data.get("cases", []):
        for arm, runs in (case.get("arms") or {}).items():
            for run in runs:
                cut = TURNS in json.dumps(run.get("error") or "")
                word = "PASS" if run.get("passed") else "FAIL"
                got[(str(case.get("name")), arm)] = f"{word} max-turns" if cut else word
    return got


def _source(plugin: Path) -> Path:
    """The plugin folder without evalkit's own files, for the runner."""
    return plugin.parent / f"{plugin.name}-runner"


def evalkit_verdicts(plugin: Path, arm: str, base: Path) -> dict[tuple[str, str], str]:
    work = Path(tempfile.mkdtemp(prefix="ek-", dir=base))
    variant = ["--variant", "none"] if arm == "without" else []
    command = [str(EVALKIT), "--suite", str(plugin), "grid", str(work), "--models",
               "policy:oracle", "--reps", "1", "--jobs", "2", "--allow-unfrozen",
               "--retry-errors", "0", *variant]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(command, env=env, cwd=base, capture_output=True, timeout=3600)
    got = {}
    for row in read_rows(work / "results.tsv"):
        word = row.verdict
        if word == "ERROR":
            word += " " + row.reasons.split(";")[0]
        got[(row.scenario, arm)] = word
    shutil.rmtree(work, ignore_errors=True)
    return got


def agreement(cli: Path, base: Path, names: list[str], modes: list[str]) -> list[Row]:
    chosen = [c for c in CASES if c.name in names]
    rows: list[Row] = []
    for mode in modes:
        plugin = base / mode / "greeter"
        write_plugin(plugin, chosen)
        shutil.copytree(plugin, _source(plugin))
        if mode == "with-without":
            (plugin / "evals" / "evalkit-settings.yaml").write_text("ablation: with-without\n")
        theirs = runner_verdicts(cli, plugin, mode, base)
        arms = ["with", "without"] if mode == "with-without" else ["with"]
        ours: dict[tuple[str, str], str] = {}
        for arm in arms:
            ours.update(evalkit_verdicts(plugin, arm, base))
        for case in chosen:
            for arm in arms:
                rows.append(Row(case.name, mode, arm, theirs.get((case.name, arm), "-"),
                                ours.get((case.name, arm), "-")))  # fmt: skip
    return rows

"""A tune's proposer agent runs like a rep, through the real CLI of each agent: confined to
its copy of the wording, the brief handed to it as its prompt on stdin, its changes read back
(those outside the paths it may change discarded and named). One proposer rep an agent:
Claude's in `make test`, Codex's and Gemini's (slower to start) in `make calibrate-suites`.

Its scripted plan is given hostile extra steps here: writes into the suite and WORKDIR
(hidden from it), a write beside the skill outside its paths, and a look at every process's
command line, where the brief must not be (a process of its own started first shows the
look reads other processes' command lines)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.propose import ProposePlan
from evalkit.suite.config import Suite
from evalkit.suite.subject import build_subject
from evalkit.tune.proposer_agent import ProposerAgent, ProposerRun, propose_by_agent
from tests.e2e.test_other_agents import require_cli
from tests.tuning_suite import SKILL, strings, write_tuning_suite

pytestmark = pytest.mark.e2e

PLAN = "policy:propose:description=Keep+a+note+of+what+outlives+the+task."
MARK = "Proposer brief line 7f3a: two failing positives want a note kept."
ARGV = ("sleep 7.25 & cat /proc/[0-9]*/cmdline | tr '\\0' ' ' > /tmp/argv.txt; kill $!; "
        "printf 'brief='; grep -c '7f3[a]:' /tmp/argv.txt; printf ' other='; "
        "grep -c 'sleep 7[.]25' /tmp/argv.txt")
LOOKED = re.compile(r"brief=(\d+)\s+other=(\d+)")
NOTES = "fixtures/plugins/notes"


def hostile(suite: Path, work: Path) -> Any:
    """The plan's script with hostile steps before its edits."""
    played = ProposePlan.script

    def script(self: ProposePlan, round_no: int, wording: Path, paths: list[str]) -> Script:
        made = played(self, round_no, wording, paths)
        writes = [(suite / "planted.txt", "x"), (work / "planted.txt", "x"),
                  (wording / "stray.txt", "outside the paths")]  # fmt: skip
        steps = [Step(blocks=[ToolUseBlock(name="Write", input={"file_path": str(p),
                                                                  "content": c})])
                 for p, c in writes]  # fmt: skip
        steps.append(Step(blocks=[ToolUseBlock(name="Bash", input={"command": ARGV})]))
        return made.model_copy(update={"steps": steps + made.steps})

    return script


@pytest.mark.parametrize("agent", [
    "claude",
    pytest.param("codex", marks=pytest.mark.slow),  # make calibrate-suites
    pytest.param("gemini", marks=pytest.mark.slow),
])  # fmt: skip
def test_the_proposer_runs_confined_with_the_brief_on_stdin(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_cli(agent)
    root = write_tuning_suite(tmp_path / "suite")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(ProposePlan, "script", hostile(root, work))
    run = ProposerRun(ProposerAgent.parse(f"{agent}:{PLAN}"), work / "proposer" / "round-1",
                      [root, work, Path.home()])  # fmt: skip
    wording = build_subject(Suite(root)).root
    brief = f"# What the current wording did\n\n{MARK}\n"
    found = propose_by_agent(run, wording, brief, [NOTES], 1)
    assert found.failed == "" and found.reps == 1 and found.cost_usd == 0.0
    assert list(found.files) == [SKILL.as_posix()]
    assert b"description: Keep a note of what outlives the task." in found.files[SKILL.as_posix()]
    assert found.discarded == ["stray.txt"]
    assert not (root / "planted.txt").exists() and not (work / "planted.txt").exists()
    bodies = [json.loads(x) for x in (run.keep / "requests.jsonl").read_text().splitlines()]
    assert any(MARK in x for x in strings(bodies[0])), "the brief is not the prompt"
    looked = [m.groups() for b in bodies for x in strings(b) if (m := LOOKED.search(x))]
    assert looked, "the look at the command lines said nothing"
    brief, other = (int(x) for x in looked[-1])
    assert other >= 1, "the look read no other process's command line"
    assert brief == 0, "the brief is on a command line"
    assert (run.keep / "transcript.jsonl").stat().st_size > 0

"""A tune's proposer agent runs like a rep, through the real Claude CLI: confined to its copy
of the wording, the brief handed to it as its prompt on stdin, its changes read back (those
outside the paths it may change discarded and named). One proposer rep, a few seconds.

Its scripted plan is given hostile extra steps here: writes into the suite and WORKDIR
(hidden from it), a write beside the skill outside its paths, and a look at every process's
command line, where the brief must not be."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.propose import ProposePlan
from evalkit.run.prerequisites.world_look import tool_result
from evalkit.suite.config import Suite
from evalkit.suite.subject import build_subject
from evalkit.tune.proposer_agent import ProposerAgent, ProposerRun, propose_by_agent
from tests.tuning_suite import SKILL, write_tuning_suite

pytestmark = pytest.mark.e2e

PLAN = "claude:policy:propose:description=Keep+a+note+of+what+outlives+the+task."
MARK = "Proposer brief line 7f3a: two failing positives want a note kept."
ARGV = "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"
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


def test_the_proposer_runs_confined_with_the_brief_on_stdin(
    claude_cli: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tuning_suite(tmp_path / "suite")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(ProposePlan, "script", hostile(root, work))
    run = ProposerRun(ProposerAgent.parse(PLAN), work / "proposer" / "round-1",
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
    first = bodies[0]["messages"][0]["content"]
    assert any(MARK in block.get("text", "") for block in first), "the brief is not the prompt"
    argv = tool_result(bodies, ARGV)
    assert "--output-format" in argv, "the look at the command lines saw no CLI"
    assert MARK not in argv, "the brief is on a command line"
    assert (run.keep / "transcript.jsonl").stat().st_size > 0

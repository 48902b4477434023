"""A recorded folder of one model with an ERROR rep, and Inspect logs read from it or made for
an import: each built once per test module, copied by a test that changes one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.models import PlanCell
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.unit.records.folder import context, record_rep

POSITIVE, NEGATIVE = "P1-L1-reporting", "N1-L1-reporting"
MODEL = "policy:oracle"
REPS = [(POSITIVE, 1, None), (POSITIVE, 2, None), (POSITIVE, 3, "cut-before-result"),
        (NEGATIVE, 1, None)]  # fmt: skip
"""(scenario, rep, the self-test case it plays): the third positive rep is cut before its
result line, an ERROR."""


@pytest.fixture(scope="module")
def recorded(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("exports") / "work"
    ctx = context(suite, work)
    record_plan(ctx, [PlanCell(scenario=POSITIVE, model=MODEL, reps=3),
                      PlanCell(scenario=NEGATIVE, model=MODEL, reps=1)], "fabricated")  # fmt: skip
    for scenario, rep, case in REPS:
        record_rep(ctx, scenario, MODEL, rep, case_name=case)
    return work


@pytest.fixture(scope="module")
def quoting(suite: Suite, recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the folder whose first positive rep quotes its scenario's Task, in its text
    and in a tool call's input, as a real model may."""
    work = tmp_path_factory.mktemp("quoting") / "work"
    shutil.copytree(recorded, work)
    task = read_task(suite.resolve(POSITIVE))
    transcript = next((work / "evidence").rglob(f"{POSITIVE}/*/rep-1/transcript.jsonl"))
    planted = [
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": task}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_q1", "name": "Bash",
             "input": {"command": f"echo '{task.upper()}'"}}]}},
    ]  # fmt: skip
    lines = transcript.read_text(encoding="utf-8").splitlines()
    lines[2:2] = [json.dumps(event) for event in planted]
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return work


@pytest.fixture(scope="module")
def exported(suite: Suite, recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from evalkit.exports.inspect_log import write_inspect_log

    out = tmp_path_factory.mktemp("log") / "work.eval"
    write_inspect_log(suite, recorded, out)
    return out

"""`doctor --world`'s reading of what the model was sent: the result a Bash call was handed
(the CLI's own reminders cut off), marker words highlighted as the scan reads them, and one
clear line for an agent whose reps have no world. Request bodies here are fabricated; the
real CLI's are read in `tests/e2e/test_doctor_world.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import PrerequisiteError
from evalkit.reference.scripted import POLICIES
from evalkit.run.prerequisites.world_look import WorldLook, look_at_world, tool_result
from evalkit.suite.config import Suite

REPO = Path(__file__).resolve().parents[3]


def _bodies(result: object) -> list[dict[str, object]]:
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "env"}}
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": result}
    return [{"messages": [{"role": "assistant", "content": [call]},
                          {"role": "user", "content": [answer]}]}]  # fmt: skip


def test_a_bash_calls_result_is_read_without_the_clis_reminders() -> None:
    text = "HOME=/home/alex\nUSER=alex\n<system-reminder>\nleft: 10\n</system-reminder>"
    assert tool_result(_bodies(text), "env") == "HOME=/home/alex\nUSER=alex"
    assert tool_result(_bodies([{"type": "text", "text": "A=1"}]), "env") == "A=1"
    assert tool_result(_bodies("A=1"), "pwd") == ""


def test_a_marker_word_is_highlighted_at_the_scans_word_boundaries() -> None:
    look = WorldLook(markers=["marker:tool-result:reserve"])
    assert look.highlighted("HOSTNAME=reserve-box") == [
        ("HOSTNAME=", False), ("reserve", True), ("-box", False)
    ]  # fmt: skip
    assert look.highlighted("RESERVED=1") == [("RESERVED=1", False)]


def test_an_agent_whose_reps_have_no_world_is_refused_in_one_line() -> None:
    with pytest.raises(PrerequisiteError, match="codex's reps have no world of their own"):
        look_at_world(Suite(REPO), POLICIES, agent="codex")

"""`doctor --world`'s reading of what the model was sent: the result a Bash call was handed
(the CLI's own reminders cut off), marker words highlighted as the scan reads them, and one
clear line for an agent whose reps have no world; a Codex or Gemini shell call's output read
out of its CLI's frame. Request bodies here are fabricated; the
real CLI's are read in `tests/e2e/test_doctor_world.py`."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from evalkit.errors import PrerequisiteError
from evalkit.reference.scripted import POLICIES
from evalkit.reference.wire.pieces import gemini_pieces, responses_pieces
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


def test_an_agent_whose_reps_have_no_world_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalkit.run.agents.base import Capabilities
    from evalkit.run.prerequisites import world_look

    bare = Capabilities("cli", False, False, "", False, (), ())
    monkeypatch.setattr(world_look, "adapter", lambda name: SimpleNamespace(capabilities=bare))
    with pytest.raises(PrerequisiteError, match="codex's reps have no world of their own"):
        look_at_world(Suite(REPO), POLICIES, agent="codex")


def test_a_shell_calls_output_is_read_out_of_codexs_and_geminis_frames() -> None:
    codex = {"input": [
        {"type": "function_call", "call_id": "c1", "arguments": '{"cmd": "env"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "Chunk ID: 1\nWall time: "
         "0.1 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\nA=1\nB=2\n"},
    ]}  # fmt: skip
    gemini = {"contents": [
        {"role": "model", "parts": [{"functionCall": {"id": "g1", "args": {"command": "env"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "g1", "response": {
            "output": "<untrusted_context>\nOutput: A=1\nB=2\nProcess Group PGID: 26\n"
                      "</untrusted_context>"}}}]},
    ]}  # fmt: skip
    assert tool_result([codex], "env", responses_pieces) == "A=1\nB=2"
    assert tool_result([gemini], "env", gemini_pieces) == "A=1\nB=2"
    assert tool_result([gemini], "pwd", gemini_pieces) == ""

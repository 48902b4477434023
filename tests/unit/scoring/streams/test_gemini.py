"""Gemini `--output-format stream-json` streams, recorded from the real gemini-cli 0.61.0
against evalkit's scripted streamGenerateContent server, read as the one transcript the
checkers see."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.models import Transcript
from evalkit.scoring.judge import final_message
from evalkit.scoring.transcript import agent_error_words, invalid_reason, parse_transcript

RECORDED = Path(__file__).parent / "gemini"


def recorded(name: str) -> Transcript:
    return parse_transcript((RECORDED / name).read_bytes())


def test_a_finished_run_is_a_valid_measurement() -> None:
    t = recorded("stream-ok.jsonl")
    assert t.bad_lines == [] and invalid_reason(t) is None
    assert t.model_id == "evalkit-demo"
    assert final_message(t) == "Done."


def test_each_tool_maps_onto_the_names_the_checkers_read() -> None:
    calls = recorded("stream-ok.jsonl").tool_calls
    assert [c.name for c in calls] == ["Read", "Skill", "Write", "Edit", "Bash"]
    assert calls[1].input == {"skill": "write"}
    assert calls[2].input["file_path"].endswith("/project/new.md")
    assert calls[3].input["old_string"] == "old line"
    assert calls[4].input["command"] == "ls missing-folder"
    assert all(c.is_error is False for c in calls)


def test_hook_runs_recorded_by_effect_are_hook_responses() -> None:
    hooks = recorded("stream-ok.jsonl").hooks
    assert [(h.hook_event, h.outcome) for h in hooks] == [("SessionStart", "success")]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("stream-500.jsonl", "agent-error:server-error:500"),
        ("stream-529.jsonl", "agent-error:overloaded"),
        ("stream-429.jsonl", "agent-error:rate-limited"),
        ("stream-cut.jsonl", "agent-error:connection-lost"),
    ],
)
def test_a_failed_run_is_named_in_geminis_own_words(name: str, words: str) -> None:
    t = recorded(name)
    assert t.result is not None and t.result.is_error
    assert invalid_reason(t) == words == agent_error_words(t)


def test_a_rejected_write_is_a_failed_call() -> None:
    stream = (RECORDED / "stream-ok.jsonl").read_text().splitlines()[:4]
    stream.append('{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{}}')
    stream.append('{"type":"tool_result","tool_id":"w1","status":"error","output":"no"}')
    (call,) = [c for c in parse_transcript("\n".join(stream).encode()).tool_calls if c.id == "w1"]
    assert (call.name, call.is_error) == ("Write", True)


def test_the_vault_write_oracle_run_writes_its_note() -> None:
    calls = recorded("vault-write-oracle.jsonl").tool_calls
    writes = [c.input["file_path"] for c in calls if c.name == "Write"]
    assert len(writes) == 1 and "/sandbox/vault/" in writes[0]


def test_write_file_replace_and_activate_skill_map_onto_the_checkers_names() -> None:
    calls = recorded("stream-edits.jsonl").tool_calls
    assert [c.name for c in calls] == ["Write", "Edit", "Edit", "Skill", "Bash"]
    assert calls[1].input["old_string"] == "old line" and calls[1].is_error is False
    assert calls[2].is_error is True, "a replace whose text is absent changed nothing"
    assert calls[3].input == {"skill": "write"}


def test_every_form_of_reading_one_skills_body_through_the_shell_is_its_use() -> None:
    calls = recorded("stream-skill-reads.jsonl").tool_calls
    assert [c.input.get("skill") for c in calls[:9]] == ["write"] * 9
    assert [c.name for c in calls[9:]] == ["Bash"] * 4

"""Parsing stream-json the way the real CLI writes it, and refusing what is not a measurement."""

from __future__ import annotations

import json

from evalkit.scoring.transcript import invalid_reason, parse_lines


def line(**event: object) -> str:
    return json.dumps(event)


INIT = line(
    type="system",
    subtype="init",
    cwd="/s/project",
    session_id="x",
    model="claude-x",
    claude_code_version="2.1.328",
    tools=["Write"],
)
HOOK = line(
    type="system",
    subtype="hook_response",
    hook_name="SessionStart:startup",
    hook_event="SessionStart",
    output="os-vault ready",
    exit_code=0,
    outcome="success",
)
USE = line(
    type="assistant",
    message={
        "id": "m1",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/v/a.md"}}
        ],
    },
)
RESULT_FOR_USE = line(
    type="user",
    message={"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "File created"}]},
)
TEXT = line(type="assistant", message={"id": "m2", "content": [{"type": "text", "text": "Done."}]})
OK = json.dumps(
    {
        "is_error": False,
        "type": "result",
        "subtype": "success",
        "terminal_reason": "completed",
        "result": "Done.",
        "num_turns": 2,
    }
)


def test_a_complete_run_is_a_valid_measurement_with_its_tool_calls_paired() -> None:
    t = parse_lines([HOOK, INIT, USE, RESULT_FOR_USE, TEXT, OK])
    assert invalid_reason(t) is None
    assert [(c.name, c.result) for c in t.tool_calls] == [("Write", "File created")]
    assert t.final_message == "Done."
    assert (t.model_id, t.cli_version) == ("claude-x", "2.1.328")
    assert t.hooks[0].hook_event == "SessionStart"


def test_a_trace_cut_before_its_result_line_is_not_a_measurement() -> None:
    assert invalid_reason(parse_lines([HOOK, INIT, USE, TEXT])) == "no-result-line"


def test_an_api_error_result_is_not_a_measurement_although_its_subtype_says_success() -> None:
    failed = json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "terminal_reason": "api_error",
            "api_error_status": 529,
        }
    )
    assert invalid_reason(parse_lines([INIT, failed])) == "agent-error:api_error:529"


def test_garbage_lines_are_named_by_number() -> None:
    reason = invalid_reason(parse_lines([INIT, "not json", TEXT, '{"type": "resu', OK]))
    assert reason == "transcript-unparseable-lines:2,4"


def test_no_init_event_and_an_empty_file_are_errors() -> None:
    assert invalid_reason(parse_lines([TEXT, OK])) == "no-init-event"
    assert invalid_reason(parse_lines([])) == "transcript-empty"


def test_a_terminal_reason_other_than_completed_is_an_error() -> None:
    odd = json.dumps({"type": "result", "is_error": False, "terminal_reason": "max_turns"})
    assert invalid_reason(parse_lines([INIT, odd])) == "terminal-reason:max_turns"


def test_the_last_result_line_wins_when_a_background_agent_adds_one() -> None:
    failed = json.dumps({"type": "result", "is_error": True, "terminal_reason": "api_error"})
    assert invalid_reason(parse_lines([INIT, OK, failed])) == "agent-error:api_error"

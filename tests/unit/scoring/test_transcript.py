"""Parsing stream-json the way the real CLI writes it, and refusing what is not a measurement."""

from __future__ import annotations

import json

from evalkit.scoring.judge import final_message
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
    assert final_message(t) == "Done."
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
    assert invalid_reason(parse_lines([INIT, failed])) == "agent-error:overloaded"


def test_garbage_lines_are_named_by_number() -> None:
    reason = invalid_reason(parse_lines([INIT, "not json", TEXT, '{"type": "resu', OK]))
    assert reason == "transcript-unparseable-lines:2,4"


def test_no_init_event_and_an_empty_file_are_errors() -> None:
    assert invalid_reason(parse_lines([TEXT, OK])) == "no-init-event"
    assert invalid_reason(parse_lines([])) == "transcript-empty"


def test_a_terminal_reason_other_than_completed_is_an_error() -> None:
    odd = json.dumps({"type": "result", "is_error": False, "terminal_reason": "odd"})
    assert invalid_reason(parse_lines([INIT, odd])) == "terminal-reason:odd"


def test_the_last_result_line_wins_when_a_background_agent_adds_one() -> None:
    failed = json.dumps({"type": "result", "is_error": True, "terminal_reason": "api_error"})
    assert invalid_reason(parse_lines([INIT, OK, failed])) == "agent-error:api-error"


def api_failure(text: str, error: str, status: int | None, kind: str | None) -> list[str]:
    """The two lines CLI 2.1.328 ends a failed run with: its synthetic assistant message and a
    result line that says success but is_error."""
    synthetic = line(
        type="assistant",
        message={"id": "s", "model": "<synthetic>", "content": [{"type": "text", "text": text}]},
        error=error,
        is_api_error_message=True,
        api_error_status=status,
        api_error_type=kind,
    )
    result = line(
        type="result",
        subtype="success",
        is_error=True,
        terminal_reason="api_error",
        api_error_status=status,
        api_error_type=kind,
        result=text,
    )
    return [synthetic, result]


def test_the_reason_carries_the_clis_own_words_for_each_api_failure() -> None:
    cases = {
        ("Not logged in · Please run /login", "authentication_failed", None, None): (
            "agent-error:not-logged-in"
        ),
        (
            "Failed to authenticate. API Error: 401 x",
            "authentication_failed",
            401,
            ("authentication_error"),
        ): "agent-error:auth-failed:401",
        ("API Error: Request rejected (429) · x", "rate_limit", 429, "rate_limit_error"): (
            "agent-error:rate-limited"
        ),
        (
            "API Error: 529 x. This is a server-side issue",
            "server_error",
            529,
            ("overloaded_error"),
        ): "agent-error:overloaded",
        ("API Error: 500 x", "server_error", 500, "api_error"): "agent-error:server-error:500",
        ("API Error: Connection to the API was lost (ECONNRESET).", "server_error", None, None): (
            "agent-error:connection-lost"
        ),
    }
    refused = api_failure(
        "API Error: Connection refused (ECONNREFUSED)", "server_error", None, None
    )
    refused[0] = refused[0].replace(
        '"is_api_error_message"', '"api_error": "connection_failed", "is_api_error_message"'
    )
    assert invalid_reason(parse_lines([INIT, *refused])) == "agent-error:connection-failed"
    for (text, error, status, kind), words in cases.items():
        t = parse_lines([INIT, *api_failure(text, error, status, kind)])
        assert invalid_reason(t) == words, text
        assert t.assistant_lines == 0


def test_max_turns_is_a_budget_outcome_and_keeps_the_turns_it_took() -> None:
    capped = line(
        type="result",
        subtype="error_max_turns",
        is_error=True,
        terminal_reason="max_turns",
        result=None,
        errors=["Reached maximum number of turns (1)"],
        num_turns=2,
    )
    t = parse_lines([INIT, USE, RESULT_FOR_USE, capped])
    assert invalid_reason(t) == "budget:max-turns"
    assert t.assistant_lines == 1 and final_message(t) == ""


def test_an_event_of_an_unexpected_shape_is_a_bad_line_not_an_exception() -> None:
    odd = [
        line(type="system", subtype="init", tools="not-a-list"),
        line(type="system", subtype="hook_response", exit_code="x"),
        line(type="assistant", message=["not", "a", "dict"]),
        line(type="user", message="text"),
        line(type="result", num_turns={"a": 1}),
        line(type="system", subtype="api_retry", attempt=[1]),
    ]
    transcript = parse_lines([INIT, *odd, OK])
    assert transcript.bad_lines == [2, 3, 4, 5, 6, 7]
    assert invalid_reason(transcript) == "transcript-unparseable-lines:2,3,4,5,6"


def test_each_tool_call_knows_the_lines_of_its_use_and_its_result() -> None:
    use = {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "bin/test"}}]}}
    result = {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}  # fmt: skip
    init = json.dumps({"type": "system", "subtype": "init"})
    lines = [init, "", json.dumps(use), json.dumps(result)]
    (call,) = parse_lines(lines).tool_calls
    assert (call.line, call.result_line) == (2, 3)

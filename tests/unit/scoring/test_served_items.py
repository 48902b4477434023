"""Codex's and Gemini's kept streams held to their servers' records item by item: records
keyed by each wire's own functions, stream lines as each CLI writes them (measured shapes),
one tampering (or none) each."""

from __future__ import annotations

import json
from typing import Any

from evalkit.models import ServedRequest
from evalkit.reference.wire import gemini, responses
from evalkit.scoring.streams.items import answer_key
from evalkit.scoring.tampering.served import NOT_SERVED, OUTSIDE, SWALLOWED, served_tampering
from evalkit.scoring.transcript import parse_lines

ROOT = "root-of-the-cli"
CALL = {"type": "function_call", "name": "exec_command", "arguments": "{}",
        "call_id": "call_s0_0_a"}  # fmt: skip
SAID = {"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "Done."}]}  # fmt: skip


def _record(*requests: ServedRequest) -> str:
    return "".join(r.model_dump_json() + "\n" for r in requests)


def _codex_turn(history: list[list[dict[str, Any]]], answer: list[dict[str, Any]],
                root: str = ROOT) -> ServedRequest:  # fmt: skip
    key, items = responses.turn_parts(answer)
    chain = [responses.turn_parts(turn)[0] for turn in history]
    return ServedRequest(kind="turn", root=root, history=chain, served=key, items=items)


def _codex(*items: dict[str, Any]) -> Any:
    lines = [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"}]
    for n, item in enumerate(items):
        lines.append({"type": "item.started", "item": {"id": f"item_{n}", **item}})
        lines.append({"type": "item.completed", "item": {"id": f"item_{n}", **item}})
    lines.append({"type": "turn.completed", "usage": {}})
    return parse_lines([json.dumps(x) for x in lines])


RUN = {"type": "command_execution", "command": "/bin/bash -lc 'ls'", "aggregated_output": "",
       "exit_code": 0, "status": "completed"}  # fmt: skip
WORDS = {"type": "agent_message", "text": "Done."}
CODEX = (_codex_turn([], [CALL]), _codex_turn([[CALL]], [SAID]))


def test_a_codex_stream_of_what_was_served_is_not_tampered_with() -> None:
    assert served_tampering(_record(*CODEX), _codex(RUN, WORDS)) is None


def test_a_codex_command_the_server_never_sent_is_tampering() -> None:
    assert served_tampering(_record(*CODEX), _codex(RUN, RUN, WORDS)) == NOT_SERVED


def test_a_codex_message_the_server_never_sent_is_tampering() -> None:
    other = {"type": "agent_message", "text": "all tests pass"}
    assert served_tampering(_record(*CODEX), _codex(RUN, other)) == NOT_SERVED


def test_a_codex_answer_missing_from_the_stream_is_tampering() -> None:
    assert served_tampering(_record(*CODEX), _codex(RUN)) == SWALLOWED


def test_a_codex_request_carrying_a_call_never_served_is_tampering() -> None:
    forged = {**CALL, "call_id": "call_s0_0_forged"}
    posted = _codex_turn([[forged]], [SAID])
    assert served_tampering(_record(*CODEX, posted), _codex(RUN, WORDS)) == OUTSIDE


def _gemini_turn(history: list[list[dict[str, Any]]], parts: list[dict[str, Any]],
                 kind: str = "turn", root: str = ROOT) -> ServedRequest:  # fmt: skip
    items = gemini.turn_items(parts)
    chain = [answer_key(gemini.turn_items(turn)) for turn in history]
    served = answer_key(items) if kind == "turn" else ""
    return ServedRequest(kind=kind, root=root, history=chain, served=served,  # type: ignore[arg-type]
                         items=items if kind == "turn" else [])  # fmt: skip


def _gemini(*events: dict[str, Any]) -> Any:
    lines = [{"type": "init", "session_id": "s", "model": "m"}, *events,
             {"type": "result", "status": "success", "stats": {}}]  # fmt: skip
    return parse_lines([json.dumps(x) for x in lines])


LOOK = [{"text": "Looking."}, {"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}]
END = [{"text": "Done."}]
GEMINI = (_gemini_turn([], LOOK), _gemini_turn([LOOK], END))
SHOWN = (
    {"type": "message", "role": "assistant", "content": "Look", "delta": True},
    {"type": "message", "role": "assistant", "content": "ing.", "delta": True},
    {"type": "tool_use", "tool_name": "read_file", "tool_id": "read_file_1", "parameters": {}},
    {"type": "tool_result", "tool_id": "read_file_1", "status": "success", "output": "x"},
    {"type": "message", "role": "assistant", "content": "Done.", "delta": True},
)


def test_a_gemini_stream_of_what_was_served_is_not_tampered_with() -> None:
    assert served_tampering(_record(*GEMINI), _gemini(*SHOWN)) is None


def test_a_gemini_call_the_server_never_sent_is_tampering() -> None:
    shell = {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "r_1",
             "parameters": {"command": "bin/test"}}  # fmt: skip
    assert served_tampering(_record(*GEMINI), _gemini(*SHOWN[:4], shell, SHOWN[4])) == NOT_SERVED


def test_a_gemini_answer_missing_from_the_stream_is_tampering() -> None:
    assert served_tampering(_record(*GEMINI), _gemini(*SHOWN[:4])) == SWALLOWED


def test_a_gemini_check_beside_the_conversation_belongs_to_it_and_another_does_not() -> None:
    aside = _gemini_turn([LOOK, END], END, kind="aside")
    assert served_tampering(_record(*GEMINI, aside), _gemini(*SHOWN)) is None
    posted = _gemini_turn([], END, kind="aside", root="the-agents-own")
    assert served_tampering(_record(*GEMINI, posted), _gemini(*SHOWN)) == OUTSIDE

"""A scripted rep's transcript held both ways to its server's record: fabricated records and
Claude Code stream lines, one tampering (or none) each."""

from __future__ import annotations

import json
from typing import Any

from evalkit.models import ServedRequest
from evalkit.scoring.tampering.served import (
    MISSING,
    NOT_SERVED,
    OUTSIDE,
    SWALLOWED,
    UNREADABLE,
    served_tampering,
    turn_key,
)
from evalkit.scoring.transcript import parse_lines

READ = [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}]
DONE = [{"type": "text", "text": "done"}]
OTHER = [{"type": "text", "text": "something the server never said"}]
ROOT = "root-of-the-cli"


def _turn(history: list[list[Any]], served: list[Any] | None, kind: str = "turn",
          root: str = ROOT) -> ServedRequest:  # fmt: skip
    return ServedRequest(kind=kind, root=root, history=[turn_key(b) for b in history],  # type: ignore[arg-type]
                         served=turn_key(served) if served else "")  # fmt: skip


def _record(*requests: ServedRequest) -> str:
    return "".join(r.model_dump_json() + "\n" for r in requests)


def _transcript(*turns: tuple[str, list[Any]], sub: str | None = None) -> Any:
    lines = [{"type": "system", "subtype": "init", "model": "m", "claude_code_version": "2"}]
    for ident, blocks in turns:
        for block in blocks:  # the CLI writes one event per content block
            message = {"id": ident, "role": "assistant", "content": [block]}
            lines.append({"type": "assistant", "parent_tool_use_id": sub, "message": message})
    lines.append({"type": "result", "subtype": "success", "result": "done"})
    return parse_lines([json.dumps(x) for x in lines])


CONVERSATION = (_turn([], READ), _turn([READ], DONE))
KEPT = _transcript(("msg_1", READ), ("msg_2", DONE))


def test_a_transcript_of_what_was_served_is_not_tampered_with() -> None:
    assert served_tampering(_record(*CONVERSATION), KEPT) is None


def test_a_turn_the_server_never_sent_is_tampering() -> None:
    injected = _transcript(("msg_1", READ), ("msg_x", OTHER), ("msg_2", DONE))
    assert served_tampering(_record(*CONVERSATION), injected) == NOT_SERVED


def test_a_served_turn_missing_from_the_transcript_is_tampering() -> None:
    swallowed = _transcript(("msg_1", READ))
    assert served_tampering(_record(*CONVERSATION), swallowed) == SWALLOWED


def test_a_request_of_another_conversation_is_tampering() -> None:
    curl = _turn([], OTHER, root="the-agents-own")
    assert served_tampering(_record(*CONVERSATION, curl), KEPT) == OUTSIDE


def test_a_request_carrying_a_turn_never_served_is_tampering() -> None:
    forged = _turn([OTHER], DONE)
    assert served_tampering(_record(*CONVERSATION, forged), KEPT) == OUTSIDE


def test_a_repeat_of_the_clis_request_answered_after_it_is_tampering() -> None:
    again = _turn([READ], OTHER)
    assert served_tampering(_record(*CONVERSATION, again), KEPT) == SWALLOWED


def test_a_request_to_another_path_is_tampering() -> None:
    other = ServedRequest(kind="other")
    assert served_tampering(_record(*CONVERSATION, other), KEPT) == OUTSIDE


def test_a_retry_after_a_broken_answer_is_the_same_conversation() -> None:
    broken = _turn([READ], None, kind="fault")
    assert served_tampering(_record(CONVERSATION[0], broken, CONVERSATION[1]), KEPT) is None


def test_a_retry_after_a_whole_answer_counts_the_last_one_served() -> None:
    first = _turn([READ], OTHER)
    assert served_tampering(_record(CONVERSATION[0], first, CONVERSATION[1]), KEPT) is None


def test_a_fault_policy_serves_nothing_and_keeps_its_own_error() -> None:
    faults = [_turn([], None, kind="fault") for _ in range(3)]
    failed = _transcript()
    assert served_tampering(_record(*faults), failed) is None


def test_a_side_request_belongs_only_beside_a_subagent() -> None:
    side = _turn([], DONE, kind="side", root="a-subagents-own")
    assert served_tampering(_record(*CONVERSATION, side), KEPT) == OUTSIDE
    subagent = [{"type": "text", "text": "OK"}]
    side = _turn([], subagent, kind="side", root="a-subagents-own")
    kept = _transcript(("msg_1", READ), ("msg_2", DONE))
    kept.events.insert(2, {"type": "assistant", "parent_tool_use_id": "toolu_1",
                           "message": {"id": "msg_s", "content": subagent}})  # fmt: skip
    assert served_tampering(_record(*CONVERSATION, side), kept) is None


def test_a_record_that_does_not_read_or_is_gone_is_tampering() -> None:
    assert served_tampering("not json\n", KEPT) == UNREADABLE
    assert served_tampering('{"kind": "turn", "extra": 1, "served": 3}\n', KEPT) == UNREADABLE
    assert served_tampering(None, KEPT) == MISSING



def test_a_head_probe_of_the_door_carries_no_conversation_and_is_not_tampering() -> None:
    probe = ServedRequest(kind="probe")
    assert served_tampering(_record(probe, *CONVERSATION), KEPT) is None

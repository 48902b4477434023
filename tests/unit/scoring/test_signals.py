"""The CLI's own labels of what fired, against its stream: each disagreement named once, a
missing export never taken for one, and a hostile export read without harm.

The exports are written here in the shape the pinned CLI sends (OTLP logs as JSON, one
body per line); `tests/e2e/test_signals.py` holds the real CLI's own.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.models import ToolCall, Transcript
from evalkit.scoring.signals import (
    SIGNALS_MISSING,
    SIGNALS_NONE,
    read_labels,
    signal_flags,
)


def _attrs(**values: str | int) -> list[dict[str, Any]]:
    def one(v: str | int) -> dict[str, Any]:
        return {"intValue": v} if isinstance(v, int) else {"stringValue": v}

    return [{"key": k.replace("_", "."), "value": one(v)} for k, v in values.items()]


def _event(seq: int, name: str, **values: str | int) -> dict[str, Any]:
    attributes = _attrs(session_id="s1", event_sequence=seq) + [
        {"key": "event.name", "value": {"stringValue": name}}
    ]
    attributes += [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]
    return {"body": {"stringValue": f"claude_code.{name}"}, "attributes": attributes}


def _export(*records: dict[str, Any]) -> str:
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": list(records)}]}]}
    return json.dumps(body) + "\n"


def _skill_call(seq: int, call: str, trigger: str = "claude-proactive") -> list[dict[str, Any]]:
    return [
        _event(seq, "tool_decision", tool_name="Skill", tool_use_id=call, decision="accept"),
        _event(seq + 1, "skill_activated", invocation_trigger=trigger),
    ]


def _called(*ids: str) -> Transcript:
    return Transcript(
        tool_calls=[ToolCall(id=i, name="Skill", input={"skill": "x"}, result="ok") for i in ids]
    )


def test_a_call_and_its_proactive_label_agree() -> None:
    text = _export(*_skill_call(3, "toolu_1"))
    assert signal_flags(True, text, _called("toolu_1")) == []


def test_a_call_labelled_as_typed_by_a_user_disagrees() -> None:
    text = _export(*_skill_call(3, "toolu_1", trigger="user-slash"))
    assert signal_flags(True, text, _called("toolu_1")) == ["signal-disagrees:trigger:user-slash"]


def test_a_label_with_no_call_disagrees() -> None:
    text = _export(*_skill_call(3, "toolu_9"))
    assert signal_flags(True, text, _called()) == ["signal-disagrees:label-without-call"]


def test_a_call_with_no_label_disagrees() -> None:
    text = _export(_event(1, "user_prompt"))
    assert signal_flags(True, text, _called("toolu_1")) == ["signal-disagrees:call-without-label"]


def test_a_skill_loaded_by_another_skill_needs_no_call() -> None:
    text = _export(_event(4, "skill_activated", invocation_trigger="nested-skill"))
    assert signal_flags(True, text, _called()) == []


def test_an_export_that_never_arrived_is_missing_not_a_disagreement() -> None:
    assert signal_flags(True, "", _called("toolu_1")) == [SIGNALS_MISSING]
    assert signal_flags(True, None, _called("toolu_1")) == [SIGNALS_MISSING]


def test_an_agent_without_labels_says_none() -> None:
    assert signal_flags(False, None, _called("toolu_1")) == [SIGNALS_NONE]


def test_labels_are_matched_by_sequence_not_by_arrival() -> None:
    first, second = _skill_call(3, "toolu_1"), _skill_call(7, "toolu_2", trigger="user-slash")
    text = _export(second[1], first[1]) + _export(second[0], first[0])
    assert signal_flags(True, text, _called("toolu_1", "toolu_2")) == [
        "signal-disagrees:trigger:user-slash"
    ]


def test_a_hostile_export_is_read_without_harm() -> None:
    bad = [
        "not json",
        json.dumps({"resourceLogs": "x"}),
        json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [{"attributes": [
            {"key": "event.name", "value": {"arrayValue": {"values": []}}}, {"key": 3},
        ]}]}]}]}),
        "[" * 10_000,
    ]  # fmt: skip
    read = read_labels("\n".join(bad) + "\n")
    assert (read.events, read.labels) == (0, ())

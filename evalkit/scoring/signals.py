"""The agent CLI's own word on which skills fired, set beside what its stream shows.

Claude Code exports its events as OTLP logs when telemetry is on; a rep's receiver keeps
each export body as one line of `telemetry.jsonl`. Measured with CLI 2.1.328: a `Skill`
call the CLI carries out is a `tool_decision` event (`tool_name: Skill`, the call's
`tool_use_id`) followed in the session's `event.sequence` by a `skill_activated` event
with `invocation_trigger` (`claude-proactive` for one the model chose) and `skill.source`;
the skill's own name is redacted for a plugin's skill, so a label is matched to its call
by that order, never by name.

The receiver listens on the rep's loopback, so the agent can post a forged export: what
is read here is a second witness, flags only, never a verdict. It is read strictly (each
line capped, every field checked for its type, anything else skipped) and the rule is
frozen with the scoring code:

- `signals:missing`: the agent exports labels, and none arrived; never a disagreement;
- `signal-disagrees:call-without-label`: a `Skill` call the CLI carried out that no label
  follows;
- `signal-disagrees:trigger:<trigger>`: a call whose label says another trigger than the
  model's own choice (`user-slash`: the CLI thought a user typed it);
- `signal-disagrees:label-without-call`: a label the model's choice would explain
  (`claude-proactive`, `user-slash`) with no call in the stream; a skill loaded by another
  skill or preloaded for a subagent has no call of its own and is no disagreement.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from evalkit.models import Transcript
from evalkit.scoring.skills import SKILL_TOOLS
from evalkit.scoring.transcript import succeeded

SIGNALS_NONE = "signals:none"
SIGNALS_MISSING = "signals:missing"
DISAGREES = "signal-disagrees:"
PROACTIVE = "claude-proactive"
CALLED_TRIGGERS = (PROACTIVE, "user-slash")
"""Triggers a `Skill` call explains; the others (`nested-skill`, `agent-preload`) have none."""
LINE_CAP = 1 << 20
LINES_CAP = 4096
EVENTS_CAP = 100_000


class Label(BaseModel):
    """One `skill_activated` event, and the `Skill` call whose decision it follows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trigger: str
    source: str
    call: str | None


class Labels(BaseModel):
    """What a rep's export said, as far as scoring reads it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    events: int
    labels: tuple[Label, ...] = ()
    api_errors: int = 0


def _value(raw: Any) -> Any:
    """An OTLP AnyValue's plain value; None for a kind this reader does not take."""
    if not isinstance(raw, dict) or len(raw) != 1:
        return None
    (kind, value), = raw.items()
    if kind == "stringValue" and isinstance(value, str):
        return value
    if kind == "intValue" and isinstance(value, int | str):
        return str(value)
    return None


def _attributes(record: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    items = record.get("attributes") if isinstance(record, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            value = _value(item.get("value"))
            if value is not None:
                found[item["key"]] = value
    return found


def _records(body: Any) -> list[dict[str, str]]:
    """Every log record's attributes in one export body, in its order."""
    out: list[dict[str, str]] = []
    resources = body.get("resourceLogs") if isinstance(body, dict) else None
    for resource in resources if isinstance(resources, list) else []:
        scopes = resource.get("scopeLogs") if isinstance(resource, dict) else None
        for scope in scopes if isinstance(scopes, list) else []:
            logs = scope.get("logRecords") if isinstance(scope, dict) else None
            out += [_attributes(r) for r in (logs if isinstance(logs, list) else [])]
    return out


def _ordered(text: str) -> list[dict[str, str]]:
    """The export's events by session and sequence number, capped."""
    events: list[dict[str, str]] = []
    for line in text.splitlines()[:LINES_CAP]:
        if len(line) > LINE_CAP:
            continue
        try:
            body = json.loads(line)
        except (ValueError, RecursionError):  # a nesting past the parser's depth included
            continue
        events += [e for e in _records(body) if "event.name" in e]
    events = events[:EVENTS_CAP]

    def key(e: dict[str, str]) -> tuple[str, int]:
        seq = e.get("event.sequence", "")
        return e.get("session.id", ""), int(seq) if seq.isdigit() else 0

    return sorted(events, key=key)


def read_labels(text: str | None) -> Labels:
    """The labels of a kept export (`telemetry.jsonl`); zero events when none arrived."""
    events = _ordered(text or "")
    labels: list[Label] = []
    pending: dict[str, str | None] = {}
    for event in events:
        name, session = event["event.name"], event.get("session.id", "")
        if name == "tool_decision" and event.get("tool_name") in SKILL_TOOLS:
            accepted = event.get("decision") == "accept"
            pending[session] = event.get("tool_use_id") if accepted else None
        elif name == "skill_activated":
            trigger, source = event.get("invocation_trigger", ""), event.get("skill.source", "")
            labels.append(Label(trigger=trigger, source=source, call=pending.pop(session, None)))
    errors = sum(1 for e in events if e["event.name"] == "api_error")
    return Labels(events=len(events), labels=tuple(labels), api_errors=errors)


def signal_flags(exports: bool, text: str | None, transcript: Transcript) -> list[str]:
    """The rep's flags for the CLI's own labels: `signals:none` for an agent that exports
    none, `signals:missing` when none arrived, else each kind of disagreement once."""
    if not exports:
        return [SIGNALS_NONE]
    read = read_labels(text)
    if read.events == 0:
        return [SIGNALS_MISSING]
    calls = [c.id for c in transcript.tool_calls if c.name in SKILL_TOOLS and succeeded(c)]
    by_call = {label.call: label for label in read.labels if label.call is not None}
    flags: list[str] = []
    for call in calls:
        label = by_call.get(call)
        if label is None:
            flags.append(DISAGREES + "call-without-label")
        elif label.trigger != PROACTIVE:
            flags.append(DISAGREES + "trigger:" + (label.trigger or "none"))
    for label in read.labels:
        if label.trigger in CALLED_TRIGGERS and label.call not in calls:
            flags.append(DISAGREES + "label-without-call")
    return list(dict.fromkeys(flags))

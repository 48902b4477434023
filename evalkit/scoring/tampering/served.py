"""A scripted rep's kept turns held to what its scripted server served, both ways.

The scripted model of a `policy:` rep is evalkit's own server, outside the sandbox. It keeps
a record of every request it saw (`served.jsonl`, written by evalkit alone): the digest of
the conversation's opening user message, the key of each assistant turn the request carried,
and the key of the turn it sent back in full. The agent can reach the server's door, so the
record is a witness of the conversation the agent cannot rewrite, and the kept transcript is
held to it (an ERROR `tampering:<what>`, the first found):

- `tampering:served-record-missing` or `-unreadable`: the process record says the server
  kept one, and there is none that reads;
- `tampering:request-outside-conversation`: a request to another path (but a HEAD, which
  carries no conversation and is answered with none: CLI 2.1.197 checks its base URL so);
  a model request
  whose opening is not the CLI's conversation's, or whose assistant turns are not a chain,
  each turn served in answer to the turns before it (an agent posting to its door itself,
  with a conversation of its own or a forged one); a side request (no tools, or a
  subagent's) when the transcript holds no subagent turn;
- `tampering:turn-not-served`: an assistant turn of the transcript the server never sent;
- `tampering:served-turn-missing`: the turn last served in full for a point of the
  conversation, missing from the transcript (a served turn swallowed, or a repeat of the
  CLI's request by someone else, answered after the CLI's own).

The CLI retries a request whose answer broke, and falls back to a non-streaming request
after a broken stream: each resends the same conversation and is served the same step again,
so only the last turn served in full for one point must appear. A fault's answer serves no
turn, so a fault policy keeps its own ERROR, found before this check.

Measured with CLI 2.1.332 and the scripted server: each assistant event of the stream
carries the server's message id, one event per content block; the opening user message's
text blocks are the same in every request of one conversation (only `cache_control`
moves); the history sends each turn's text back as served, but not always a tool call's input
(the CLI normalises some tools' input, such as a file's content, before it runs and resends
it: a reserve scenario's parallel Writes came back changed). A key is over text blocks
(stripped, empty ones dropped, redacted as the kept transcript is) and tool_use blocks by id
and name: the id is the server's own, random, so a call is known by it alone.

Codex's and Gemini's streams show the model's answers item by item, under ids the CLI made
(`scoring/streams/items.py`, measured with codex-cli 0.171.0 and gemini-cli 0.61.0), so their
servers record each served turn's items too, keyed as the stream shows them, and the
transcript is held to them by count: an item shown more often than the server ever sent it
is `turn-not-served`; an item of the turns last served in full, shown less often, is
`served-turn-missing`. Their requests still carry whole turns (Codex's assistant items
between two tool outputs, Gemini's `model` contents), so the chain of turns is checked as
for Claude Code. Gemini's requests that ask no step (a next-speaker check: no stream) are
`aside`: they must belong to the conversation, and serve no turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from evalkit.models import ServedRequest, Transcript
from evalkit.scoring.streams import MODEL_ITEMS
from evalkit.scoring.streams.items import digest as _digest

TAMPERING = "tampering:"
MISSING = f"{TAMPERING}served-record-missing"
UNREADABLE = f"{TAMPERING}served-record-unreadable"
OUTSIDE = f"{TAMPERING}request-outside-conversation"
NOT_SERVED = f"{TAMPERING}turn-not-served"
SWALLOWED = f"{TAMPERING}served-turn-missing"
LINES_CAP = 100_000
LINE_CAP = 1 << 20


def turn_key(blocks: Any) -> str:
    """The key of an assistant turn's content blocks (a served answer, a turn a request
    carried back, or the transcript's blocks of one message); empty when it holds none."""
    parts: list[list[Any]] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str) and text.strip():
            parts.append(["text", text.strip()])
        elif block.get("type") == "tool_use":
            parts.append(["tool_use", str(block.get("id", "")), str(block.get("name", ""))])
    return _digest(parts) if parts else ""


def root_key(messages: Any) -> str:
    """The digest of a conversation's opening user message, by its texts alone."""
    first = next(
        (m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None
    ) if isinstance(messages, list) else None  # fmt: skip
    content = first.get("content") if first is not None else None
    if isinstance(content, str):
        return _digest([content])
    texts = [b.get("text") for b in content if isinstance(b, dict)] if isinstance(
        content, list) else []  # fmt: skip
    return _digest([t for t in texts if isinstance(t, str)])


def history_keys(messages: Any) -> list[str]:
    """The key of each assistant turn a request's conversation carries, in order."""
    turns = messages if isinstance(messages, list) else []
    return [
        turn_key(m.get("content"))
        for m in turns
        if isinstance(m, dict) and m.get("role") == "assistant"
    ]


def read_served(text: str) -> list[ServedRequest]:
    """The record, strictly: every line a `ServedRequest`, within the caps; ValueError
    otherwise."""
    lines = text.splitlines()
    if len(lines) > LINES_CAP:
        raise ValueError("too many lines")
    found = []
    for line in lines:
        if len(line) > LINE_CAP:
            raise ValueError("a line over the cap")
        if line.strip():
            try:
                found.append(ServedRequest.model_validate_json(line))
            except ValidationError as exc:
                raise ValueError(str(exc)) from exc
    return found


def transcript_turns(transcript: Transcript) -> list[tuple[str, bool]]:
    """Each assistant message of Claude Code's stream, by key, and whether a subagent's:
    the events of one message id joined (the CLI writes one per content block); the CLI's
    own error lines are not the model's."""
    blocks: dict[str, list[Any]] = {}
    subagent: dict[str, bool] = {}
    for number, event in enumerate(transcript.events):
        message = event.get("message")
        if event.get("type") != "assistant" or event.get("is_api_error_message"):
            continue
        if not isinstance(message, dict):
            continue
        ident = message.get("id")
        ident = ident if isinstance(ident, str) and ident else f"line-{number}"
        content = message.get("content")
        blocks.setdefault(ident, []).extend(content if isinstance(content, list) else [])
        subagent[ident] = subagent.get(ident, False) or bool(event.get("parent_tool_use_id"))
    keys = [(turn_key(found), subagent[ident]) for ident, found in blocks.items()]
    return [(key, sub) for key, sub in keys if key]


def served_tampering(record: str | None, transcript: Transcript) -> str | None:
    """The first tampering the server's record shows against the transcript, or None. Asked
    only of a rep whose server kept a record (`ProcessRecord.served`); a stream that shows
    the model's answers item by item is held to the served turns' items."""
    if record is None:
        return MISSING
    try:
        requests = read_served(record)
    except ValueError:
        return UNREADABLE
    shown = MODEL_ITEMS.get(transcript.agent)
    turns = transcript_turns(transcript) if shown is None else []
    answered: dict[tuple[str, ...], list[str]] = {}
    for request in requests:
        if request.kind == "turn" and request.served:
            answered.setdefault(tuple(request.history), []).append(request.served)
    subagents = any(sub for _, sub in turns)
    if any(_outside(r, requests, answered, subagents) for r in requests):
        return OUTSIDE
    if shown is not None:
        return _items_tampering(requests, answered, shown(transcript.events))
    served = {r.served for r in requests if r.served}
    if any(key not in served for key, _ in turns):
        return NOT_SERVED
    kept = {key for key, _ in turns}
    if any(keys[-1] not in kept for keys in answered.values()):
        return SWALLOWED
    return None


def _outside(
    request: ServedRequest,
    requests: Iterable[ServedRequest],
    answered: dict[tuple[str, ...], list[str]],
    subagents: bool,
) -> bool:
    """Whether a request is not one of the CLI's conversation (a probe carries none)."""
    if request.kind == "probe":
        return False
    if request.kind == "other":
        return True
    if request.kind == "side":
        return not subagents
    root = next((r.root for r in requests if r.kind not in ("other", "side", "probe")), "")
    if request.root != root:
        return True
    history = request.history
    return any(key not in answered.get(tuple(history[:i]), []) for i, key in enumerate(history))


def _items_tampering(
    requests: list[ServedRequest], answered: dict[tuple[str, ...], list[str]], shown: list[str]
) -> str | None:
    """A stream shown item by item held to the served turns' items, by count: no item shown
    more often than any answer at each point of the conversation sent it, and every item of
    the answer last served in full at each point shown."""
    items_of = {r.served: r.items for r in requests if r.kind == "turn" and r.served}
    allowed: Counter[str] = Counter()
    expected: Counter[str] = Counter()
    for keys in answered.values():
        most: Counter[str] = Counter()
        for key in keys:
            most |= Counter(items_of.get(key, []))
        allowed += most
        expected += Counter(items_of.get(keys[-1], []))
    seen = Counter(shown)
    if seen - allowed:
        return NOT_SERVED
    if expected - seen:
        return SWALLOWED
    return None

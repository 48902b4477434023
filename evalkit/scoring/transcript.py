"""Parsing the CLI's stream-json into a Transcript.

Each line is parsed as JSON on its own (the result line's first key is not
``type``). Anything that does not parse is kept as a line number, so the checker
can refuse to score a broken trace instead of guessing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.errors import NotFoundError
from evalkit.models import (
    ApiErrorMessage,
    ApiRetry,
    HookEvent,
    InitEvent,
    ResultEvent,
    ToolCall,
    Transcript,
)
from evalkit.scoring.streams.codex import CodexStream, is_codex_event
from evalkit.scoring.streams.gemini import GeminiStream, is_gemini_event

WORDS_LIMIT = 40


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text", "") for c in content if isinstance(c, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def parse_lines(lines: list[str]) -> Transcript:
    t = Transcript()
    calls: dict[str, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    count = 0
    bad: list[int] = []
    other: CodexStream | GeminiStream | None = None
    first = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        count += 1
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            bad.append(number)
            continue
        if not isinstance(event, dict):
            bad.append(number)
            continue
        t.events.append(event)
        if first:  # another agent's stream is known by its opening event
            first = False
            if is_codex_event(event):
                other = CodexStream(t, order)
                t.agent = "codex"
            elif is_gemini_event(event):
                other = GeminiStream(t, order)
                t.agent = "gemini"
        try:
            if other is not None:
                other.absorb(event, number - 1)
            else:
                _absorb(t, calls, order, event, number - 1)
        except (ValidationError, AttributeError, TypeError, ValueError):
            # Hostile or unforeseen input: the trace is not a measurement, and says where.
            bad.append(number)
    # Models are built once at the end: assigning to a pydantic model per event costs more
    # than parsing the event.
    t.lines, t.bad_lines = count, bad
    t.tool_calls = [ToolCall.model_construct(**fields) for fields in order]
    return t


def _mapping(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError("a message that is not an object")
    return value


def _absorb(
    t: Transcript,
    calls: dict[str, dict[str, Any]],
    order: list[dict[str, Any]],
    event: dict[str, Any],
    line: int = 0,
) -> None:
    kind = event.get("type")
    subtype = event.get("subtype")
    if kind == "system":
        if subtype == "init":
            t.init = InitEvent.model_validate(event)
        elif subtype in ("hook_started", "hook_response"):
            t.hooks.append(HookEvent.model_validate(event))
        elif subtype == "api_retry":
            t.retries.append(ApiRetry.model_validate(event))
    elif kind == "assistant":
        message = _mapping(event.get("message"))
        if event.get("is_api_error_message"):
            t.api_error = _api_error(event, message)
        else:
            t.assistant_lines += 1
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and not event.get("is_api_error_message"):
                t.texts.append(str(block.get("text", "")))
            elif block.get("type") == "thinking":
                t.thoughts.append(str(block.get("thinking", "")))
            elif block.get("type") == "tool_use":
                tool_input = block.get("input")
                call_id = str(block.get("id", ""))
                call: dict[str, Any] = {
                    "id": call_id,
                    "name": str(block.get("name", "")),
                    "input": tool_input if isinstance(tool_input, dict) else {},
                    "result": None,
                    "is_error": None,
                    "line": line,
                    "result_line": None,
                }
                calls[call_id] = call
                order.append(call)
    elif kind == "user":
        message = _mapping(event.get("message"))
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                paired = calls.get(str(block.get("tool_use_id", "")))
                if paired is not None:
                    flag = block.get("is_error")
                    paired["result"] = _result_text(block.get("content"))
                    paired["is_error"] = flag if isinstance(flag, bool) else None
                    paired["result_line"] = line
    elif kind == "result":
        t.result = ResultEvent.model_validate(event)


def _api_error(event: dict[str, Any], message: dict[str, Any]) -> ApiErrorMessage:
    status = event.get("api_error_status")
    return ApiErrorMessage(
        error=str(event.get("error") or ""),
        status=status if isinstance(status, int) else None,
        error_type=str(event.get("api_error_type") or ""),
        cause=str(event.get("api_error") or ""),
        text=_result_text(message.get("content")),
    )


def _slug(text: str) -> str:
    """A short slug of one of the CLI's enum-like fields (never free text, which could hold
    a secret): lower case, dashes, bounded."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:WORDS_LIMIT].rstrip("-") or "unknown"


def agent_error_words(t: Transcript) -> str:
    """The CLI's own account of why it stopped, in a few redacted words a report can show.

    Measured with CLI 2.1.328: no credentials end with the text "Not logged in · Please run
    /login" and no status; 401 with error ``authentication_failed``; 429 with ``rate_limit``;
    529 with type ``overloaded_error``; a cut stream with no status and "Connection to the API
    was lost"; a refused connection with ``"api_error": "connection_failed"``; ``--max-turns``
    with subtype ``error_max_turns``.
    """
    result = t.result or ResultEvent()
    if result.subtype.startswith("error_max_") or result.terminal_reason == "max_turns":
        limit = result.subtype.removeprefix("error_") if result.subtype else "max_turns"
        return f"budget:{_slug(limit)}"
    said = t.api_error or ApiErrorMessage()
    status = result.api_error_status or said.status
    kind = said.error_type or result.api_error_type or ""
    text = said.text or result.result or ""
    if text.startswith("Not logged in"):
        return "agent-error:not-logged-in"
    if status in (401, 403) or said.error == "authentication_failed":
        word = "auth-failed"
    elif status == 429 or said.error == "rate_limit":
        return "agent-error:rate-limited"
    elif status == 529 or kind == "overloaded_error":
        return "agent-error:overloaded"
    elif status is not None and status >= 500:
        word = "server-error"
    elif "connection" in text.lower() and "lost" in text.lower():
        word = "connection-lost"
    elif said.cause:
        word = _slug(said.cause)
    elif "timed out" in text.lower() or "timeout" in text.lower():
        word = "api-timeout"
    else:
        word = _slug(said.error or result.terminal_reason or "unknown")
    return f"agent-error:{word}" + (f":{status}" if status is not None else "")


def failed(call: ToolCall) -> bool:
    """The tool rejected the call (its result is marked as an error): the call had no effect,
    so no rule may count it as done."""
    return call.is_error is True


def succeeded(call: ToolCall) -> bool:
    """A result came back and it is not marked as an error."""
    return call.result is not None and not failed(call)


def invalid_reason(t: Transcript) -> str | None:
    """Why this trace is not a valid measurement, or None when it is one."""
    if t.lines == 0:
        return "transcript-empty"
    if t.bad_lines:
        shown = ",".join(str(n) for n in t.bad_lines[:5])
        return f"transcript-unparseable-lines:{shown}"
    if t.init is None:
        return "no-init-event"
    if t.result is None:
        return "no-result-line"
    if t.result.is_error or t.result.terminal_reason == "max_turns":
        return agent_error_words(t)
    if t.result.terminal_reason not in (None, "completed"):
        return f"terminal-reason:{t.result.terminal_reason}"
    return None


def read_transcript(path: Path) -> Transcript:
    if not path.is_file():
        raise NotFoundError(f"{path}: no transcript; was the agent run in this sandbox?")
    return parse_transcript(path.read_bytes())


def parse_transcript(data: bytes) -> Transcript:
    """A transcript file's bytes, parsed: what `read_transcript` reads from a path."""
    return parse_lines(data.decode("utf-8", errors="replace").splitlines())

"""What the world put in a Responses API (Codex) or a Gemini request, by the scan's channels.

The scan of the Messages API (`scoring/world/leaks.py`) reads Claude Code's requests; each
other wire carries the same channels in its own shape, read here into the same
(channel, text, the call's own input) pieces `Scan.reasons` takes:
- the system prompt: Codex's `instructions` and its developer messages of its own (the
  first, and those its CLI wraps in a tag: the skills list, the permissions), Gemini's
  `systemInstruction`; and every tool's description;
- the environment's context: a user message the CLI wrapped in a tag of its own (Codex's
  `<environment_context>`, Gemini's `<session_context>`, with the working directory, the
  workspace's folders, the date);
- a tool's result, against the call that asked for it (a word its own call named is not
  blamed);
- a hook's output: Codex hands a hook's words to its model as a developer message of no tag.
The user's own words (the Task) are a user message with no tag and are never read, nor are
the model's own turns.

Measured with codex-cli 0.171.0 and gemini-cli 0.61.0 against the scripted servers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from evalkit.scoring.jstext import input_text

Piece = tuple[str, str, str]
_TAGGED = re.compile(r"\s*<([a-z_][a-z_ ]*)>.*</\1>\s*", re.DOTALL)
"""A text the CLI wrapped whole in a tag of its own (`<environment_context>…</…>`)."""
_AGENTS_FILE = re.compile(r"#\s*AGENTS\.md instructions for ")
"""Codex's wrapping of the project's own instruction file."""


def _texts(value: Any) -> list[str]:
    """The text of a string or of a list of parts (`text` of each)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v.get("text") if isinstance(v, dict) else v)]
    if isinstance(value, dict):
        return _texts(value.get("parts"))
    return []


def _strings(value: Any) -> list[str]:
    """Every string in a decoded JSON value (a tool's structured result)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _own(arguments: Any) -> str:
    """A call's input as the scan reads one (a JSON string of arguments decoded first)."""
    if isinstance(arguments, str):
        try:
            decoded: Any = json.loads(arguments)
        except ValueError:
            return arguments
        return str(input_text(decoded))
    return str(input_text(arguments))


def _tagged(text: str) -> bool:
    return bool(_TAGGED.fullmatch(text) or _AGENTS_FILE.match(text))


def _descriptions(tools: Any) -> Iterator[Piece]:
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        for declared in tool.get("functionDeclarations") or [tool]:
            if isinstance(declared, dict):
                yield "system-prompt", "\n".join(_texts(declared.get("description"))), ""


def responses_pieces(body: dict[str, Any]) -> Iterator[Piece]:
    """Every piece of one Responses API request body the world contributed."""
    yield "system-prompt", "\n".join(_texts(body.get("instructions"))), ""
    yield from _descriptions(body.get("tools"))
    calls: dict[str, str] = {}
    developer = 0
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind, role = item.get("type"), item.get("role")
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            calls[str(item.get("call_id"))] = _own(item.get("arguments", item.get("input")))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            own = calls.get(str(item.get("call_id")), "")
            yield "tool-result", "\n".join(_strings(item.get("output"))), own
        elif kind in ("message", None) and role in ("developer", "system"):
            developer += 1
            for text in _texts(item.get("content")):
                own_text = developer == 1 or _tagged(text)
                yield ("system-prompt" if own_text else "hook-output"), text, ""
        elif kind in ("message", None) and role == "user":
            for text in _texts(item.get("content")):
                if _tagged(text):  # never the user's own words (the Task)
                    yield "env-context", text, ""


def gemini_pieces(body: dict[str, Any]) -> Iterator[Piece]:
    """Every piece of one Gemini generateContent request body the world contributed."""
    yield "system-prompt", "\n".join(_texts(body.get("systemInstruction"))), ""
    yield from _descriptions(body.get("tools"))
    calls: dict[str, str] = {}
    contents = body.get("contents")
    for turn in contents if isinstance(contents, list) else []:
        parts = turn.get("parts") if isinstance(turn, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            call, answer = part.get("functionCall"), part.get("functionResponse")
            if isinstance(call, dict):
                calls[str(call.get("id") or call.get("name"))] = _own(call.get("args"))
            elif isinstance(answer, dict):
                own = calls.get(str(answer.get("id") or answer.get("name")), "")
                yield "tool-result", "\n".join(_strings(answer.get("response"))), own
            elif turn.get("role") == "user" and isinstance(part.get("text"), str):
                if _tagged(part["text"]):  # never the user's own words (the Task)
                    yield "env-context", part["text"], ""

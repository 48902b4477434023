"""Gemini CLI's `--output-format stream-json` events as a Transcript.

Measured with gemini-cli 0.61.0 against the scripted server: ``init`` (session and model),
``message`` (the user's prompt, then the model's words, possibly as deltas), ``tool_use``
(tool name, id, parameters) and ``tool_result`` (id, status, output), and a closing
``result`` (status and stats). Mapped onto the names the checkers read: write_file is Write,
replace Edit, read_file Read, run_shell_command Bash, activate_skill Skill, glob Glob and
grep_search Grep; a shell command that prints one skill's SKILL.md is that skill's use
(`skillreads.py`). Hook runs arrive as ``evalkit.hook_run`` lines appended by evalkit.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.models import ApiErrorMessage, HookEvent, InitEvent, ResultEvent, Transcript
from evalkit.scoring.streams.items import call_item, text_item
from evalkit.scoring.streams.skillreads import skill_read

HOOK_RUN = "evalkit.hook_run"
HOOK_EVENTS = {
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "PreToolUse": "BeforeTool",
    "PostToolUse": "AfterTool",
}
"""Claude Code's hook events Gemini can run, under Gemini's names. A required hook of any
other event (Stop, UserPromptSubmit) cannot fire."""
_CODE = re.compile(r'\\?"code\\?":\s*(\d{3})')
TOOLS = {
    "write_file": "Write",
    "replace": "Edit",
    "read_file": "Read",
    "run_shell_command": "Bash",
    "activate_skill": "Skill",
    "glob": "Glob",
    "grep_search": "Grep",
}


def is_gemini_event(event: dict[str, Any]) -> bool:
    return event.get("type") == "init" and "subtype" not in event


def _call(tool: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The checkers' name and input for one of Gemini's calls: a shell command that prints
    one skill's SKILL.md is that skill's use, as activate_skill is (`skillreads.py`)."""
    if tool == "activate_skill":
        return "Skill", {"skill": str(params.get("name") or "")}
    if tool == "run_shell_command":
        skill = skill_read(str(params.get("command") or ""))
        if skill is not None:
            return "Skill", {"skill": skill}
    return TOOLS.get(tool, tool), dict(params)


def model_items(events: list[dict[str, Any]]) -> list[str]:
    """The model's answers as the stream shows them, item by item (`items.py`): each run of
    the assistant's message events by its joined text (the CLI writes a text as deltas), each
    tool_use by the tool's name."""
    found: list[str] = []
    words: list[str] = []
    for event in events:
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            words.append(str(event.get("content") or ""))
            continue
        found.append(text_item("".join(words)))
        words = []
        if kind == "tool_use":
            found.append(call_item(str(event.get("tool_name") or "")))
    found.append(text_item("".join(words)))
    return [key for key in found if key]


class GeminiStream:
    """Absorbs one event at a time into a transcript (see `parse_lines`)."""

    def __init__(self, t: Transcript, order: list[dict[str, Any]]) -> None:
        self.t = t
        self.order = order
        self.calls: dict[str, dict[str, Any]] = {}
        self.last_delta = False

    def absorb(self, event: dict[str, Any], line: int = 0) -> None:
        """One event, read from the transcript's line `line` (from 0): a tool call sits on
        the rep's timeline from its tool_use line to its tool_result line."""
        kind = event.get("type")
        delta = False
        if kind == "init":
            self.t.init = InitEvent(
                session_id=str(event.get("session_id") or ""), model=str(event.get("model") or "")
            )
        elif kind == "message" and event.get("role") == "assistant":
            text = str(event.get("content") or "")
            delta = bool(event.get("delta"))
            if delta and self.last_delta and self.t.texts:
                self.t.texts[-1] += text
            else:
                self.t.texts.append(text)
                self.t.assistant_lines += 1
        elif kind == "tool_use":
            tool = str(event.get("tool_name") or "")
            params = event.get("parameters")
            name, given = _call(tool, params if isinstance(params, dict) else {})
            call: dict[str, Any] = {
                "id": str(event.get("tool_id") or ""),
                "name": name,
                "input": given,
                "result": None,
                "is_error": None,
                "line": line,
                "result_line": None,
            }
            self.calls[call["id"]] = call
            self.order.append(call)
        elif kind == "tool_result":
            found = self.calls.get(str(event.get("tool_id") or ""))
            if found is not None:
                error = event.get("error")
                said = error.get("message") if isinstance(error, dict) else error
                found["result"] = str(event.get("output") or said or "")
                found["is_error"] = event.get("status") != "success"
                found["result_line"] = line
        elif kind == "result":
            self._result(event)
        elif kind == HOOK_RUN:
            self.t.hooks.append(HookEvent.model_validate({**event, "subtype": "hook_response"}))
        self.last_delta = delta

    def _result(self, event: dict[str, Any]) -> None:
        stats = event.get("stats")
        stats = stats if isinstance(stats, dict) else {}
        usage = {
            "input_tokens": stats.get("input_tokens", 0),
            "output_tokens": stats.get("output_tokens", 0),
            "cache_read_input_tokens": stats.get("cached", 0),
        }
        duration = stats.get("duration_ms")
        ok = event.get("status") == "success"
        error = event.get("error")
        message = str(error.get("message") if isinstance(error, dict) else error or "")
        self.t.result = ResultEvent(
            subtype="success" if ok else "error",
            is_error=not ok,
            result=None if ok else message,
            num_turns=1,
            usage=usage,
            duration_ms=duration if isinstance(duration, int) else 0,
        )
        if not ok:
            self.t.api_error = failure(message)


def failure(message: str) -> ApiErrorMessage:
    """The HTTP status or cause in Gemini's words for a failed run (measured with 0.61.0,
    retries capped at one attempt): an error body it quotes carries ``"code":N``; a 429 is
    told as "Please wait and try again later"; a cut stream as "[API Error: terminated]"."""
    code = _CODE.search(message)
    if code is not None:
        return ApiErrorMessage(status=int(code.group(1)), text=message)
    if "Please wait and try again later" in message:
        return ApiErrorMessage(status=429, text=message)
    if "[API Error: terminated]" in message:
        return ApiErrorMessage(cause="connection-lost", text=message)
    return ApiErrorMessage(text=message)

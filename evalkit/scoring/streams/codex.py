"""Codex CLI's `exec --json` items as a Transcript.

Measured with codex-cli 0.169.0 against the scripted Responses server: the stream opens with
``thread.started``; each tool run is an ``item.started``/``item.completed`` pair; a shell
command is a ``command_execution`` item (``/bin/bash -lc '<cmd>'``, its output, exit code and
status); a patch, whether sent as ``apply_patch`` or as ``apply_patch <<EOF`` through the
shell, is a ``file_change`` item naming each path and its kind (add, update, delete) but not
its text; the model's words are ``agent_message`` items; warnings are ``error`` items; the run
ends with ``turn.completed`` (usage) or ``turn.failed`` (the CLI's error message), and a
top-level ``error`` event may precede a failure.

Mapped onto the names the checkers read: a command becomes Bash (or Skill when it prints
one skill's SKILL.md, `skillreads.py`: Codex lists skills and the model opens the file), an
added file Write and an
updated or deleted one Edit (a moved one an Edit whose ``move_path`` names where it went:
a write at both ends). Hook runs and moves, which the stream does not report, arrive as
``evalkit.hook_run`` and ``evalkit.patch_move`` lines that evalkit appends after the CLI
exits.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from evalkit.models import ApiErrorMessage, HookEvent, InitEvent, ResultEvent, Transcript
from evalkit.scoring.streams.items import call_item, text_item
from evalkit.scoring.streams.skillreads import skill_read

HOOK_RUN = "evalkit.hook_run"
PATCH_MOVE = "evalkit.patch_move"
"""A move a patch made (`path` to `move_path`), which the stream reports as an update of
`path` alone (measured with 0.169.0): evalkit appends one line per move after the CLI
exits, read from the session record Codex keeps in its home."""
OPENING = "thread.started"
HOOK_EVENTS = {
    "SessionStart": "SessionStart",
    "SessionEnd": "Stop",
    "Stop": "Stop",
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "UserPromptSubmit": "UserPromptSubmit",
}
"""Claude Code's hook events Codex can run, under Codex's names; Codex has no SessionEnd, and
in `exec` its Stop ends the session. A required hook of any other event cannot fire."""
_STATUS = re.compile(r"(?:unexpected status|last status:) (\d{3})")
WRAPPERS = (["/bin/bash", "-lc"], ["bash", "-lc"], ["/bin/sh", "-c"], ["sh", "-c"])


def is_codex_event(event: dict[str, Any]) -> bool:
    kind = event.get("type")
    return kind == OPENING or (isinstance(kind, str) and kind.startswith(("turn.", "item.")))


CALL_ITEMS = ("command_execution", "file_change")
"""The items a function call of the model shows as (measured with 0.169.0 and 0.171.0): a
command run, or a patch sent through the shell."""


def model_items(events: list[dict[str, Any]]) -> list[str]:
    """The model's answers as the stream shows them, item by item (`items.py`): each completed
    agent message by its text, each completed command or file change as one call."""
    found = []
    for event in events:
        item = event.get("item") if event.get("type") == "item.completed" else None
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "agent_message" and isinstance(item, dict):
            found.append(text_item(str(item.get("text") or "")))
        elif kind in CALL_ITEMS:
            found.append(call_item())
    return [key for key in found if key]


def inner_command(command: str) -> str:
    """The command the model sent, out of the shell wrapper Codex reports it in."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    for wrapper in WRAPPERS:
        if words[: len(wrapper)] == wrapper and len(words) == len(wrapper) + 1:
            return words[-1]
    return command


def failure(message: str) -> ApiErrorMessage:
    """The HTTP status or cause in Codex's words for a failed turn (measured with 0.169.0):
    a 500 reads "high demand", other statuses "unexpected status N" or, once retries are
    spent, "last status: N"; a cut stream "stream disconnected before completion"."""
    status = _STATUS.search(message)
    if status is not None:
        return ApiErrorMessage(status=int(status.group(1)), text=message)
    if "high demand" in message:
        return ApiErrorMessage(status=500, text=message)
    if message.startswith("stream disconnected"):
        return ApiErrorMessage(cause="connection-lost", text=message)
    return ApiErrorMessage(text=message)


class CodexStream:
    """Absorbs one event at a time into a transcript (see `parse_lines`)."""

    def __init__(self, t: Transcript, order: list[dict[str, Any]]) -> None:
        self.t = t
        self.order = order
        self.calls: dict[str, list[dict[str, Any]]] = {}
        self.failure = ""
        self.line = 0

    def absorb(self, event: dict[str, Any], line: int = 0) -> None:
        """One event, read from the transcript's line `line` (from 0): a tool call sits on
        the rep's timeline from its item's first line to the line it completed on."""
        self.line = line
        kind = event.get("type")
        if kind == OPENING:
            self.t.init = InitEvent(session_id=str(event.get("thread_id") or ""))
        elif kind == "item.started":
            self._item(_object(event.get("item")), done=False)
        elif kind == "item.completed":
            self._item(_object(event.get("item")), done=True)
        elif kind == "turn.completed":
            self.t.result = ResultEvent(
                subtype="success", num_turns=1, usage=_usage(event.get("usage"))
            )
        elif kind == "turn.failed":
            message = str(_object(event.get("error")).get("message") or self.failure)
            self.t.result = ResultEvent(subtype="error", is_error=True, result=message)
            self.t.api_error = failure(message)
        elif kind == "error":
            self.failure = str(event.get("message") or "")
        elif kind == HOOK_RUN:
            self.t.hooks.append(HookEvent.model_validate({**event, "subtype": "hook_response"}))
        elif kind == PATCH_MOVE:
            self._moved(str(event.get("path") or ""), str(event.get("move_path") or ""))

    def _moved(self, path: str, target: str) -> None:
        """The first update of `path` not yet known as a move becomes one to `target`."""
        for call in self.order:
            changed = call.get("input", {})
            if (call.get("name") == "Edit" and changed.get("file_path") == path
                    and changed.get("change") == "update" and target):  # fmt: skip
                changed.update(change="move", move_path=target)
                return

    def _item(self, item: dict[str, Any], done: bool) -> None:
        kind = item.get("type")
        if kind == "agent_message" and done:
            self.t.texts.append(str(item.get("text") or ""))
            self.t.assistant_lines += 1
        elif kind == "command_execution":
            self._command(item, done)
        elif kind == "file_change":
            self._changes(item, done)

    def _calls(self, item: dict[str, Any], made: list[dict[str, Any]]) -> list[dict[str, Any]]:
        key = str(item.get("id") or "")
        if key not in self.calls:
            self.calls[key] = made
            self.order.extend(made)
        return self.calls[key]

    def _command(self, item: dict[str, Any], done: bool) -> None:
        command = inner_command(str(item.get("command") or ""))
        skill = skill_read(command)
        call_id = str(item.get("id") or "")
        if skill is not None:
            made = {"id": call_id, "name": "Skill", "input": {"skill": skill}}
        else:
            made = {"id": call_id, "name": "Bash", "input": {"command": command}}
        fresh = {**made, "result": None, "is_error": None, "line": self.line, "result_line": None}
        (call,) = self._calls(item, [fresh])
        if done:
            call["result_line"] = self.line
            code = item.get("exit_code")
            call["result"] = str(item.get("aggregated_output") or "")
            call["is_error"] = item.get("status") != "completed" or (
                isinstance(code, int) and code != 0
            )

    def _changes(self, item: dict[str, Any], done: bool) -> None:
        changes = item.get("changes")
        made = []
        for n, change in enumerate(changes if isinstance(changes, list) else []):
            change = _object(change)
            name = "Write" if change.get("kind") == "add" else "Edit"
            path = str(change.get("path") or "")
            made.append(
                {
                    "id": f"{item.get('id')}.{n}",
                    "name": name,
                    "input": {"file_path": path, "change": str(change.get("kind") or "")},
                    "result": None,
                    "is_error": None,
                    "line": self.line,
                    "result_line": None,
                }
            )
        calls = self._calls(item, made)
        if done:
            for call in calls:
                call["result_line"] = self.line
                call["is_error"] = item.get("status") != "completed"
                call["result"] = str(item.get("status") or "")


def _object(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError("an item that is not an object")
    return value


def _usage(value: Any) -> dict[str, Any]:
    usage = _object(value)
    return {
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "cache_read_input_tokens": usage.get("cached_input_tokens", 0),
        "cache_creation_input_tokens": usage.get("cache_write_input_tokens", 0),
    }

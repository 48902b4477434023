"""A fabricated run told in another agent's own stream format, for `self-test --agent`.

`fabricate.py` plays a script and says what happened in Claude Code's stream-json; an
encoder here retells each of those events the way the Codex CLI (`exec --json` items) or the
Gemini CLI (`--output-format stream-json` events) reports the same step, in the shapes
recorded from the real CLIs (`tests/unit/scoring/streams/`). The tool calls are the ones each
agent's scripted server sends (`reference/wire/`), so self-test proves the checkers through
the same normaliser a real rep of that agent is read by. Hook runs, which neither stream
reports, follow the stream as the recorder's lines, as they do in a rep's kept transcript.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Protocol

from evalkit.models import ToolUseBlock
from evalkit.reference.wire.gemini import gemini_call
from evalkit.reference.wire.responses import shell_command
from evalkit.scoring.streams.codex import HOOK_RUN

CODEX_500 = "We’re currently experiencing high demand, which may cause temporary errors."
GEMINI_500 = '[API Error: {"error":{"code":500,"message":"fabricated fault","status":"INTERNAL"}}]'
_EXIT = re.compile(r"^Exit code (\d+)\n")


class StreamEncoder(Protocol):
    lost: set[str]
    """What a Claude Code stream showed that this agent's stream cannot, for this run."""

    def encode(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The agent's events for one of Claude Code's stream-json events."""

    def close(self) -> list[dict[str, Any]]:
        """What follows the stream once the CLI has exited (the recorded hook runs)."""


class ClaudeEncoder:
    def __init__(self) -> None:
        self.lost: set[str] = set()

    def encode(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        return [event]

    def close(self) -> list[dict[str, Any]]:
        return []


def _hook_run(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": HOOK_RUN,
        "hook_event": event.get("hook_event", ""),
        "hook_name": f"{event.get('hook_event', '')}:fabricated",
        "exit_code": event.get("exit_code", 0),
        "outcome": event.get("outcome", "success"),
        "output": event.get("output", ""),
    }


def _blocks(event: dict[str, Any]) -> list[dict[str, Any]]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


class _Encoder:
    """What both agents share: hook runs held back to the end, each tool call remembered
    by its id until its result comes."""

    def __init__(self) -> None:
        self.hooks: list[dict[str, Any]] = []
        self.pending: dict[str, ToolUseBlock] = {}
        self.lost: set[str] = set()

    def encode(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind, subtype = event.get("type"), event.get("subtype")
        if kind == "system" and subtype == "hook_response":
            self.hooks.append(_hook_run(event))
            return []
        if kind == "system" and subtype == "init":
            return self.init(event)
        out: list[dict[str, Any]] = []
        for block in _blocks(event):
            if block.get("type") == "text":
                out += self.text(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                call_id = str(block.get("id", ""))
                tool_input = block.get("input")
                call = ToolUseBlock(
                    name=str(block.get("name", "")),
                    input=tool_input if isinstance(tool_input, dict) else {},
                )
                self.pending[call_id] = call
                out += self.tool_use(call_id, call)
            elif block.get("type") == "tool_result":
                tool_id = str(block.get("tool_use_id", ""))
                text = str(block.get("content", ""))
                error = block.get("is_error") is True
                out += self.tool_result(tool_id, self.pending.pop(tool_id), text, error)
        if kind == "result":
            out += self.result(event)
        return out

    def close(self) -> list[dict[str, Any]]:
        return self.hooks

    def init(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def text(self, text: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    def tool_use(self, call_id: str, call: ToolUseBlock) -> list[dict[str, Any]]:
        raise NotImplementedError

    def tool_result(
        self, call_id: str, call: ToolUseBlock, text: str, error: bool
    ) -> list[dict[str, Any]]:
        raise NotImplementedError

    def result(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        raise NotImplementedError


class CodexEncoder(_Encoder):
    """Codex's items: a Write an added file and an Edit an updated one (a `file_change`
    naming the path and kind, never the text), anything else a shell command, a Skill the
    `cat` of its SKILL.md under `skills`."""

    def __init__(self, skills: Path) -> None:
        super().__init__()
        self.skills = skills
        self.items = 0

    def _item(self, call_id: str, call: ToolUseBlock, status: str, **fields: Any) -> dict[str, Any]:
        item_id = f"item_{call_id}"
        if call.name in ("Write", "Edit"):
            kind = "add" if call.name == "Write" else "update"
            path = str(call.input.get("file_path", ""))
            return {
                "id": item_id,
                "type": "file_change",
                "changes": [{"path": path, "kind": kind}],
                "status": status,
            }
        if call.name in ("Glob", "Grep"):
            self.lost.add(f"the {call.name} tool (Codex runs a shell command)")
        command = shell_command(call, self.skills)
        return {
            "id": item_id,
            "type": "command_execution",
            "command": f"/bin/bash -lc {shlex.quote(command)}",
            "status": status,
            **fields,
        }

    def init(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "thread.started", "thread_id": "fabricated"}, {"type": "turn.started"}]

    def text(self, text: str) -> list[dict[str, Any]]:
        self.items += 1
        item = {"id": f"msg_{self.items}", "type": "agent_message", "text": text}
        return [{"type": "item.completed", "item": item}]

    def tool_use(self, call_id: str, call: ToolUseBlock) -> list[dict[str, Any]]:
        fields: dict[str, Any] = {}
        if call.name not in ("Write", "Edit"):
            fields = {"aggregated_output": "", "exit_code": None}
        return [
            {"type": "item.started", "item": self._item(call_id, call, "in_progress", **fields)}
        ]

    def tool_result(
        self, call_id: str, call: ToolUseBlock, text: str, error: bool
    ) -> list[dict[str, Any]]:
        status = "failed" if error else "completed"
        if call.name in ("Write", "Edit"):
            return [{"type": "item.completed", "item": self._item(call_id, call, status)}]
        code = _EXIT.match(text)
        exit_code = int(code.group(1)) if code else (1 if error else 0)
        output = text[code.end() :] if code else text
        item = self._item(call_id, call, status, aggregated_output=output, exit_code=exit_code)
        return [{"type": "item.completed", "item": item}]

    def result(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        if event.get("is_error"):
            error = {"message": CODEX_500}
            return [{"type": "error", **error}, {"type": "turn.failed", "error": error}]
        usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
        return [{"type": "turn.completed", "usage": usage}]


class GeminiEncoder(_Encoder):
    """Gemini's events: each tool call as its own tool (write_file, replace, read_file,
    run_shell_command, activate_skill with the skill's bare name); a shell command that
    exits non-zero is still a successful call, as the real CLI reports it."""

    def init(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "init", "session_id": "fabricated", "model": str(event.get("model", ""))}]

    def text(self, text: str) -> list[dict[str, Any]]:
        return [{"type": "message", "role": "assistant", "content": text, "delta": True}]

    def tool_use(self, call_id: str, call: ToolUseBlock) -> list[dict[str, Any]]:
        tool, parameters = gemini_call(call)
        if call.name == "Skill" and ":" in str(call.input.get("skill", "")):
            self.lost.add("a skill's plugin (activate_skill takes the bare name)")
        return [
            {"type": "tool_use", "tool_name": tool, "tool_id": call_id, "parameters": parameters}
        ]

    def tool_result(
        self, call_id: str, call: ToolUseBlock, text: str, error: bool
    ) -> list[dict[str, Any]]:
        if call.name == "Bash":
            code = _EXIT.match(text)
            if error:
                self.lost.add("a shell command's exit status")
            output = text[code.end() :] if code else text
            return [
                {"type": "tool_result", "tool_id": call_id, "status": "success", "output": output}
            ]
        if error:
            return [
                {
                    "type": "tool_result",
                    "tool_id": call_id,
                    "status": "error",
                    "output": "",
                    "error": {"type": "fabricated", "message": text},
                }
            ]
        return [{"type": "tool_result", "tool_id": call_id, "status": "success", "output": text}]

    def result(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        stats = {"input_tokens": 0, "output_tokens": 0, "cached": 0, "duration_ms": 1}
        if event.get("is_error"):
            error = {"type": "unknown", "message": GEMINI_500}
            return [{"type": "result", "status": "error", "error": error, "stats": stats}]
        return [{"type": "result", "status": "success", "stats": stats}]


def encoder_for(agent: str, scratch: Path) -> StreamEncoder:
    """The encoder of `agent`'s stream; a Codex skill is read from `scratch`'s skills folder,
    where a rep of Codex would find it."""
    from evalkit.reference.wire import stream_encoder
    from evalkit.run.agents.registry import adapter

    return stream_encoder(agent, adapter(agent).skills_folder(scratch))

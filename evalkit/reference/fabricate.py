"""Playing a script without any model, to fabricate a run for self-test.

The effects are real (files are written, Bash commands run in the sandbox) and the
transcript is written line by line in the CLI's stream-json shape, so the checker
sees exactly what it would see from a real run. Only self-test uses this.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from evalkit.checkers.behaviour import Fault
from evalkit.models import Script, ToolUseBlock
from evalkit.reference.agent_streams import ClaudeEncoder, StreamEncoder
from evalkit.reference.reactive import fill

FABRICATED_VERSION = "0.0.0-fabricated"


class _Lines:
    def __init__(self, stream: Path | None = None, encoder: StreamEncoder | None = None) -> None:
        self.lines: list[str] = []
        self.counter = 0
        self.stream = stream
        self.encoder = encoder or ClaudeEncoder()
        if stream is not None:
            stream.write_bytes(b"")

    def add(self, event: dict[str, Any]) -> None:
        """Say one of Claude Code's events in the agent's own stream format."""
        self._write(self.encoder.encode(event))

    def close(self) -> list[str]:
        """The lines, with what follows the agent's stream (hook runs it does not report)."""
        self._write(self.encoder.close())
        return self.lines

    def _write(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self.lines.append(json.dumps(event))
            if self.stream is not None:
                with self.stream.open("a", encoding="utf-8") as handle:
                    handle.write(self.lines[-1] + "\n")

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_fab{self.counter:04d}"


REQUIRED_INPUT = {"Write": "file_path", "Edit": "file_path", "Read": "file_path",
                  "Bash": "command"}  # fmt: skip
"""The input each tool cannot run without: a call lacking it is the tool's error, as the
CLI answers one (a generated `tool: Read` step names no file), never a crash."""


def _at(project: Path, named: str) -> Path:
    """Where a file tool's path lands: a relative one against the project, the CLI's working
    directory, never against evalkit's own (a fabricated case must not write beside it)."""
    return project / named


def _apply(
    block: ToolUseBlock, project: Path, env: dict[str, str], plugins: bool = True
) -> tuple[str, bool | None]:
    """Carry out one tool call as the CLI would; return its result text and is_error. With no
    plugin loaded, every skill is unknown (the fabricated session has only plugin skills)."""
    data = block.input
    needed = REQUIRED_INPUT.get(block.name)
    if needed is not None and not isinstance(data.get(needed), str):
        return (f"<tool_use_error>InputValidationError: {block.name} failed due to the "
                f"following issue: The required parameter `{needed}` is missing"
                "</tool_use_error>"), True  # fmt: skip
    if block.name == "Write":
        path = _at(project, data["file_path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data["content"], encoding="utf-8")
        return f"File created successfully at: {path}", None
    if block.name == "Edit":
        path = _at(project, data["file_path"])
        if not path.is_file():
            return f"<tool_use_error>File does not exist: {path}</tool_use_error>", True
        text = path.read_text(encoding="utf-8")
        old, new = str(data.get("old_string", "")), str(data.get("new_string", ""))
        if not old or old not in text:
            return "<tool_use_error>String to replace not found in file.</tool_use_error>", True
        count = -1 if data.get("replace_all") else 1
        path.write_text(text.replace(old, new, count), encoding="utf-8")
        return f"The file {path} has been updated.", None
    if block.name == "Read":
        path = _at(project, data["file_path"])
        if not path.is_file():
            return f"<tool_use_error>File does not exist: {path}</tool_use_error>", True
        return path.read_text(encoding="utf-8", errors="replace"), None
    if block.name == "Bash":
        done = subprocess.run(
            ["bash", "-c", data["command"]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        out = done.stdout + done.stderr
        if done.returncode:
            return f"Exit code {done.returncode}\n{out}", True
        return out, False
    if block.name == "Skill" and not plugins:
        return f"<tool_use_error>Unknown skill: {data.get('skill', '')}</tool_use_error>", True
    if block.name == "Skill":
        return f"Launching skill: {data.get('skill', '')}", None
    if block.name in ("Glob", "Grep"):
        return _search(block.name, data, project), None
    return f"<tool_use_error>No such tool available: {block.name}</tool_use_error>", True


def _search(tool: str, data: dict[str, Any], project: Path) -> str:
    """Enough of Glob and Grep for a fabricated run: matching paths, one per line."""
    root = Path(data.get("path") or project)
    if tool == "Glob":
        hits = sorted(str(p) for p in root.glob(str(data.get("pattern", "*"))))
    else:
        pattern = re.compile(str(data.get("pattern", "")))
        hits = sorted(
            str(p)
            for p in root.rglob("*")
            if p.is_file()
            and ".git" not in p.parts
            and pattern.search(p.read_bytes().decode("utf-8", "replace"))
        )
    return "\n".join(hits) if hits else "No files found"


def fabricate(
    script: Script,
    sandbox: Path,
    env: dict[str, str],
    hook_output: str,
    fault: Fault | None = None,
    model: str = "fabricated",
    stream: Path | None = None,
    plugins: bool = True,
    encoder: StreamEncoder | None = None,
) -> list[str]:
    """Play script in sandbox; return the stream-json lines a real run would have printed,
    also written to `stream` line by line as they happen (an observed script counts them).
    `plugins` False is the no-plugin arm: no hook fires and no skill is known. `encoder`
    tells the run in another agent's stream format (`agent_streams.py`)."""
    out = _Lines(stream, encoder)
    project = sandbox / "project"
    _open(out, project, hook_output, model, fault != "no-hook" and plugins)
    latest = _play(out, script, project, dict(os.environ, **env), model, plugins)
    return _close(out, script, latest, model, fault)


def _open(out: _Lines, project: Path, hook_output: str, model: str, hook: bool) -> None:
    """The lines a run opens with: the SessionStart hook's answer (when it fires), then init."""
    if hook:
        out.add(
            {
                "type": "system",
                "subtype": "hook_response",
                "hook_name": "SessionStart:startup",
                "hook_event": "SessionStart",
                "output": hook_output,
                "stdout": hook_output,
                "stderr": "",
                "exit_code": 0,
                "outcome": "success",
            }
        )
    out.add(
        {
            "type": "system",
            "subtype": "init",
            "cwd": str(project),
            "session_id": "fabricated",
            "tools": ["Bash", "Edit", "Read", "Skill", "Write"],
            "model": model,
            "permissionMode": "bypassPermissions",
            "claude_code_version": FABRICATED_VERSION,
            "plugins": [],
            "skills": [],
        }
    )


def _play(
    out: _Lines, script: Script, project: Path, run_env: dict[str, str], model: str, plugins: bool
) -> str:
    """Each step's blocks, each tool use applied to the project and answered; returns the
    last tool result's text (what a quoting final message quotes)."""
    latest = ""
    for step in script.steps:
        message_id = out.next_id("msg")
        for block in step.blocks:
            if isinstance(block, ToolUseBlock):
                tool_id = out.next_id("toolu")
                content: dict[str, Any] = {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": block.name,
                    "input": block.input,
                }
                block_ids = tool_id
            else:
                content = {"type": "text", "text": fill(block.text, block.quote, latest)}
                block_ids = ""
            out.add(
                {
                    "type": "assistant",
                    "message": {
                        "id": message_id,
                        "role": "assistant",
                        "model": model,
                        "content": [content],
                        "stop_reason": None,
                    },
                }
            )
            if block_ids:
                assert isinstance(block, ToolUseBlock)
                text, is_error = _apply(block, project, run_env, plugins)
                latest = text
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": block_ids,
                    "content": text,
                }
                if is_error is not None:
                    result["is_error"] = is_error
                out.add({"type": "user", "message": {"role": "user", "content": [result]}})
    return latest


def _close(
    out: _Lines, script: Script, latest: str, model: str, fault: Fault | None
) -> list[str]:
    """The final message and the result line (none when the fault cuts the run before it)."""
    final = fill(script.final_text, script.final_quote, latest)
    out.add(
        {
            "type": "assistant",
            "message": {
                "id": out.next_id("msg"),
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": final}],
                "stop_reason": None,
            },
        }
    )
    if fault == "cut-before-result":
        return out.close()
    failed = fault == "is-error-result"
    out.add(
        {
            "type": "result",
            "subtype": "success",
            "is_error": failed,
            "terminal_reason": "api_error" if failed else "completed",
            "api_error_status": 500 if failed else None,
            "result": final,
            "num_turns": len(script.steps) + 1,
            "duration_ms": 1,
            "total_cost_usd": 0.0,
            "usage": {},
        }
    )
    return out.close()

"""The scripted model spoken as Gemini's ``streamGenerateContent`` (SSE), for the Gemini CLI.

Measured with gemini-cli 0.61.0: it posts ``/v1beta/models/<model>:streamGenerateContent
?alt=sse`` for each agent step, with the conversation in ``contents`` (``model`` turns hold
its ``functionCall`` parts, ``user`` turns the ``functionResponse`` parts); other
generateContent requests (a topic, a next-speaker check) are side requests answered with a
short text. A script written in Claude Code's tool names is sent as Gemini's own tools:
write_file, replace, read_file, run_shell_command, activate_skill, glob, grep_search.
The step served is the number of model turns in the conversation.

Every request is recorded as the Messages API server records it (`served_record`). Measured
with 0.61.0: the first ``user`` content (the session context and the prompt) opens every
request of a conversation, and each ``model`` content carries an earlier answer back, its
text parts as served and its function calls by name (with ids the CLI made, which the server
never saw). A turn is keyed by its items as Gemini's stream shows them
(`scoring/streams/items.py`): its text parts joined, each call by its name. A request that
is not streamed asks no step: it is recorded `aside`, held to the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from evalkit.models import ServedRequest, TextBlock, ToolUseBlock
from evalkit.records.kept.redact import redact
from evalkit.reference.reactive import fill
from evalkit.reference.scripted_server import (
    RETRY_AFTER_SECONDS,
    SIDE_TEXT,
    RequestLog,
    ScriptedServer,
    _Handler,
    _say_held,
)
from evalkit.reference.wire.pieces import gemini_pieces
from evalkit.scoring.streams.items import answer_key, call_item, digest, text_item

_STATUS = {500: "INTERNAL", 529: "UNAVAILABLE", 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED"}


def gemini_call(block: ToolUseBlock) -> tuple[str, dict[str, Any]]:
    """Gemini's tool and arguments for one of Claude Code's tool calls."""
    args = block.input
    name = block.name
    if name == "Write":
        return "write_file", {
            "file_path": args.get("file_path", ""),
            "content": args.get("content", ""),
        }
    if name == "Edit":
        return "replace", {
            "file_path": args.get("file_path", ""),
            "old_string": args.get("old_string", ""),
            "new_string": args.get("new_string", ""),
            "instruction": "as scripted",
        }
    if name == "Read":
        return "read_file", {"file_path": args.get("file_path", "")}
    if name == "Bash":
        return "run_shell_command", {"command": args.get("command", "")}
    if name == "Skill":
        return "activate_skill", {"name": str(args.get("skill", "")).split(":")[-1]}
    where = {"dir_path": args["path"]} if args.get("path") else {}
    if name == "Glob":
        return "glob", {"pattern": args.get("pattern", "*"), **where}
    if name == "Grep":
        return "grep_search", {"pattern": args.get("pattern", ""), **where}
    return "run_shell_command", {"command": f"echo no Gemini tool stands for {name}"}


def _latest_response(contents: Any) -> str:
    latest = ""
    for turn in contents if isinstance(contents, list) else []:
        for part in turn.get("parts", []) if isinstance(turn, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response")
                output = response.get("output") if isinstance(response, dict) else response
                latest = output if isinstance(output, str) else json.dumps(output)
    return latest


def turn_items(parts: Any) -> list[str]:
    """One answer's items as Gemini's stream shows them: each run of text parts joined (and
    redacted, as the kept transcript is), each function call by its name."""
    shown: list[str] = []
    words: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            words.append(part["text"])
        elif isinstance(part.get("functionCall"), dict):
            shown.append(text_item(redact("".join(words))))
            words = []
            shown.append(call_item(str(part["functionCall"].get("name", ""))))
    shown.append(text_item(redact("".join(words))))
    return [key for key in shown if key]


def history_turns(contents: Any) -> list[str]:
    """The key of each earlier answer a request's contents carry: each `model` content."""
    turns = contents if isinstance(contents, list) else []
    return [answer_key(turn_items(t.get("parts"))) for t in turns
            if isinstance(t, dict) and t.get("role") == "model"]  # fmt: skip


def opening(contents: Any) -> str:
    """The digest of the first user content, by its text parts."""
    first = next((t for t in contents if isinstance(t, dict) and t.get("role") == "user"),
                 None) if isinstance(contents, list) else None  # fmt: skip
    parts = first.get("parts") if first is not None else None
    texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(
        parts, list) else []  # fmt: skip
    return digest([t for t in texts if isinstance(t, str)])


def _model_turns(contents: Any) -> int:
    turns = contents if isinstance(contents, list) else []
    return sum(1 for t in turns if isinstance(t, dict) and t.get("role") == "model")


class GeminiServer(ScriptedServer):
    """The scripted model behind ``POST /v1beta/models/<model>:<method>``."""

    PATH = "/v1beta/models"

    def request_pieces(self, body: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
        return gemini_pieces(body)

    def serves(self, path: str) -> bool:
        return path.startswith(self.PATH + "/") and ":" in path

    def _answer(self, handler: _Handler, request: dict[str, Any], size: int) -> None:
        self._received(request)
        model, _, method = handler.path.split("?")[0].rpartition("/")[2].partition(":")
        stream = method == "streamGenerateContent"
        contents = request.get("contents")
        step = _model_turns(contents) if stream else None
        held = self.turn_cap is not None and step is not None and step >= self.turn_cap
        kind = "held" if held else "turn" if stream else "aside"
        asked = self._keep(ServedRequest(
            kind=kind, root=opening(contents), history=history_turns(contents)
        ))  # fmt: skip
        if self._hold(handler, step):
            return
        stopped = bool(self.latency) and self._released.wait(self.latency)
        if stream and (stopped or self.fault is not None):
            asked.kind = "fault"  # it serves no turn, whatever follows
        if stopped:
            handler.drop_connection()
            return
        if self.fault in ("500", "529", "401", "429") and stream:
            status = int(self.fault)
            self._log(RequestLog(handler.path, True, model, None, status))
            error = {
                "error": {
                    "code": status,
                    "message": f"scripted fault {status}",
                    "status": _STATUS[status],
                }
            }
            extra = {"retry-after": str(RETRY_AFTER_SECONDS)} if status == 429 else None
            handler.reply_json(status, error, extra)
            return
        chunks = list(self._chunks(step, _latest_response(contents), size))
        if self.fault == "hang" and stream:
            self._log(RequestLog(handler.path, True, model, None, 200))
            handler.open_stream("text/event-stream")
            _say_held()
            self._released.wait()
            handler.drop_connection()
            return
        if self.fault == "cut" and stream:
            self._log(RequestLog(handler.path, True, model, None, 200))
            handler.open_stream("text/event-stream")
            handler.write_chunk(chunks[0][: len(chunks[0]) // 2])
            handler.drop_connection()
            return
        self._log(RequestLog(handler.path, stream, model, step, 200, side=not stream))
        if not stream:
            handler.reply_json(200, json.loads(chunks[0].decode().removeprefix("data: ")))
            return
        handler.open_stream("text/event-stream")
        for data in chunks:
            handler.write_chunk(data)
        handler.write_chunk(b"")
        served = turn_items(self._parts(step, _latest_response(contents)))
        asked.served, asked.items = answer_key(served), served  # sent in full

    def _parts(self, step: int | None, latest: str) -> list[dict[str, Any]]:
        if step is None:
            return [{"text": SIDE_TEXT}]
        if step >= len(self.script.steps):
            return [{"text": fill(self.script.final_text, self.script.final_quote, latest)}]
        parts: list[dict[str, Any]] = []
        for block in self.script.steps[step].blocks:
            if isinstance(block, TextBlock):
                parts.append({"text": fill(block.text, block.quote, latest)})
            else:
                name, args = gemini_call(block)
                parts.append({"functionCall": {"name": name, "args": args}})
        return parts

    def _chunks(self, step: int | None, latest: str, size: int) -> Iterator[bytes]:
        parts = self._parts(step, latest)
        out = max(1, len(json.dumps(parts)) // 4)
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": max(1, size // 4),
                "candidatesTokenCount": out,
                "totalTokenCount": max(1, size // 4) + out,
            },
        }
        if step is None:
            yield json.dumps(chunk).encode()
            return
        yield f"data: {json.dumps(chunk)}\r\n\r\n".encode()

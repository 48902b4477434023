"""The scripted model spoken as the streamed OpenAI Responses API, for the Codex CLI.

A script is written in Claude Code's tool names; here each tool call becomes what Codex's
model would send. Codex 0.169.0 with a model it has no metadata for offers ``exec_command``
but no ``apply_patch`` tool, and runs ``apply_patch <<'EOF'`` sent through the shell as a
patch (reported as a ``file_change`` item). So a Write is an added file, an Edit an updated
one, a Read a ``cat``, and a Skill a read of the skill's SKILL.md where evalkit placed it, in
each of the ways a model reads one (`SKILL_READS`), by the step and place of the call.

The step served is one more than the highest step named in the call ids of the
conversation's earlier function calls (parallel calls of one step share it), so a retried
request is served the same step again.

Every request is recorded as the Messages API server records it (`served_record`). Measured
with codex-cli 0.171.0: each request's ``input`` opens with the CLI's developer and user
messages (the first user message, the environment context, is the conversation's opening)
and carries each earlier answer back as served: the assistant's message items with their
text, and the function calls with the server's call ids, a turn's parallel calls together
before their outputs. So a turn of the history is the run of assistant items between two
other items, keyed by its texts and call ids; its items are keyed as Codex's stream shows
them (`scoring/streams/items.py`): a message by its text, a call as a call.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalkit.models import Script, ServedRequest, TextBlock, ToolUseBlock
from evalkit.records.kept.redact import redact
from evalkit.reference.reactive import fill
from evalkit.reference.scripted_server import (
    RETRY_AFTER_SECONDS,
    RequestLog,
    ScriptedServer,
    _Handler,
    _new_id,
    _pieces,
    _say_held,
)
from evalkit.reference.wire.pieces import responses_pieces
from evalkit.scoring.streams.items import call_item, digest, text_item

PATCH_END = "EVALKIT_PATCH_END"
REFUSED = "exec_command failed"
"""How Codex reports back a call it would not start (its own command policy rejected it, as
it rejects `ln -s` to a folder outside the project; measured with 0.171.0): no item of its
stream shows such a call."""
_STEP = re.compile(r"^call_s(\d+)_")
_ERROR_CODES = {
    500: "server_error",
    529: "server_is_overloaded",
    401: "invalid_api_key",
    429: "rate_limit_exceeded",
}


def _patch(body: str) -> str:
    return f"apply_patch <<'{PATCH_END}'\n*** Begin Patch\n{body}*** End Patch\n{PATCH_END}\n"


def _added(path: str, content: str) -> str:
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Add File: {path}\n{lines}"


def _updated(path: str, old: str, new: str) -> str:
    minus = "".join(f"-{line}\n" for line in old.splitlines())
    plus = "".join(f"+{line}\n" for line in new.splitlines())
    return f"*** Update File: {path}\n@@\n{minus}{plus}"


SKILL_READS = (
    "cat {}",
    "sed -n '1,200p' {}",
    "cat -n {}",
    "nl -ba {}",
    "head -n 400 {}",
    "tail -n +1 {}",
    "awk '{{print}}' {}",
    "less {}",
)
"""The ways a model opens a skill's SKILL.md through the shell, played in turn (and
`python3 -c` with `open(…).read()` last), so every form evalkit counts as the skill's use
is met by the real CLI."""


def skill_command(path: str, form: int) -> str:
    """The `form`-th way (cycling) of printing the SKILL.md at `path`."""
    form %= len(SKILL_READS) + 1
    if form == len(SKILL_READS):
        return f"python3 -c {shlex.quote(f'print(open({path!r}).read())')}"
    return SKILL_READS[form].format(shlex.quote(path))


def shell_command(block: ToolUseBlock, skills: Path, form: int = 0) -> str:
    """The shell command Codex's model would send for one of Claude Code's tool calls; a
    Skill is read in the `form`-th of the ways a model reads one."""
    args = block.input
    name = block.name
    if name == "Bash":
        return str(args.get("command", ""))
    if name == "Read":
        return f"cat {shlex.quote(str(args.get('file_path', '')))}"
    if name == "Write":
        return _patch(_added(str(args.get("file_path", "")), str(args.get("content", ""))))
    if name == "Edit":
        path = str(args.get("file_path", ""))
        return _patch(
            _updated(path, str(args.get("old_string", "")), str(args.get("new_string", "")))
        )
    if name == "Skill":
        return skill_command(str(skills / str(args.get("skill", "")) / "SKILL.md"), form)
    if name == "Glob":
        base = str(args.get("path") or "")
        pattern = str(args.get("pattern", "*"))
        return f"ls -d {shlex.quote(base.rstrip('/')) + '/' if base else ''}{pattern}"
    if name == "Grep":
        where = shlex.quote(str(args.get("path") or "."))
        return f"grep -rn {shlex.quote(str(args.get('pattern', '')))} {where}"
    return f"echo {shlex.quote(f'no Codex tool stands for {name}')}"


def _step(items: Any) -> int:
    steps = [-1]
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call":
            found = _STEP.match(str(item.get("call_id", "")))
            if found:
                steps.append(int(found.group(1)))
    return max(steps) + 1


def _latest_output(items: Any) -> str:
    latest = ""
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            latest = output if isinstance(output, str) else json.dumps(output)
    return latest


def _said(item: dict[str, Any]) -> str:
    """The text of an assistant message item, redacted as the kept transcript is."""
    content = item.get("content")
    texts = [c.get("text") for c in content if isinstance(c, dict)] if isinstance(
        content, list) else []  # fmt: skip
    return redact("".join(t for t in texts if isinstance(t, str))).strip()


def _assistant(item: Any) -> bool:
    return isinstance(item, dict) and (
        item.get("type") == "function_call"
        or (item.get("type") == "message" and item.get("role") == "assistant")
    )


def turn_parts(items: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """One answer's key (its texts and the server's call ids) and its items' keys as
    Codex's stream shows them."""
    chain: list[list[str]] = []
    shown = []
    for item in items:
        if item.get("type") == "function_call":
            chain.append(["call", str(item.get("call_id", ""))])
            shown.append(call_item())
        elif _said(item):
            chain.append(["text", _said(item)])
            shown.append(text_item(_said(item)))
    return (digest(chain) if chain else "", shown)


def history_turns(items: Any) -> list[str]:
    """The key of each earlier answer a request's input carries: each run of assistant
    items between two other items."""
    turns: list[list[dict[str, Any]]] = []
    run: list[dict[str, Any]] = []
    for item in [*(items if isinstance(items, list) else []), None]:
        if _assistant(item):
            run.append(item)
        elif run:
            turns.append(run)
            run = []
    return [turn_parts(turn)[0] for turn in turns]


def opening(items: Any) -> str:
    """The digest of the input's first user message, by its texts."""
    users = [i for i in items if isinstance(i, dict) and i.get("type") == "message"
             and i.get("role") == "user"] if isinstance(items, list) else []  # fmt: skip
    first = users[0] if users else None
    content = first.get("content") if first is not None else None
    texts = [c.get("text") for c in content if isinstance(c, dict)] if isinstance(
        content, list) else []  # fmt: skip
    return digest([t for t in texts if isinstance(t, str)])


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class ResponsesServer(ScriptedServer):
    """The scripted model behind ``POST /v1/responses``, streamed."""

    PATH = "/v1/responses"

    def request_pieces(self, body: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
        return responses_pieces(body)

    def __init__(self, script: Script, fault: str | None = None, skills: Path = Path()) -> None:
        super().__init__(script, fault)
        self.skills = skills
        """Where this rep's skills were placed, so a Skill reads its SKILL.md there."""
        self.calls: dict[str, ServedRequest] = {}
        """The record of the answer that sent each call id, until the CLI reports its call."""

    def _answer(self, handler: _Handler, request: dict[str, Any], size: int) -> None:
        self._received(request)
        model = str(request.get("model", ""))
        items = request.get("input")
        step = _step(items)
        held = self.turn_cap is not None and step >= self.turn_cap
        asked = self._keep(ServedRequest(
            kind="held" if held else "turn", root=opening(items), history=history_turns(items)
        ))  # fmt: skip
        self._unshown(items)
        if self._hold(handler, step):
            return
        stopped = bool(self.latency) and self._released.wait(self.latency)
        if stopped or self.fault is not None:
            asked.kind = "fault"  # it serves no turn, whatever follows
        if stopped:
            handler.drop_connection()
            return
        if self.fault in ("500", "529", "401", "429"):
            status = int(self.fault)
            self._log(RequestLog(handler.path, True, model, None, status))
            error = {
                "error": {
                    "message": f"scripted fault {status}",
                    "type": "error",
                    "code": _ERROR_CODES[status],
                }
            }
            extra = {"retry-after": str(RETRY_AFTER_SECONDS)} if status == 429 else None
            handler.reply_json(status, error, extra)
            return
        answer = self._items(step, _latest_output(items))
        events = list(self._events(answer, model, size))
        if self.fault == "hang":
            self._log(RequestLog(handler.path, True, model, None, 200))
            handler.open_stream("text/event-stream")
            _say_held()
            self._released.wait()
            handler.drop_connection()
            return
        if self.fault == "cut":
            self._log(RequestLog(handler.path, True, model, None, 200))
            handler.open_stream("text/event-stream")
            for data in events[:2]:
                handler.write_chunk(data)
            handler.drop_connection()
            return
        self._log(RequestLog(handler.path, True, model, step, 200))
        handler.open_stream("text/event-stream")
        for data in events:
            handler.write_chunk(data)
        handler.write_chunk(b"")
        asked.served, asked.items = turn_parts(answer)  # sent in full: a write that broke raised
        with self._lock:
            self.calls.update((c["call_id"], asked) for c in answer if "call_id" in c)

    def _unshown(self, items: Any) -> None:
        """A call the CLI refused to start (its output says `exec_command failed`: Codex's
        own policy rejected it) is never shown in its stream, so the record of the answer that
        sent it no longer counts it among the items the stream must show."""
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or item.get("type") != "function_call_output":
                continue
            output = item.get("output")
            if not isinstance(output, str) or not output.startswith(REFUSED):
                continue
            with self._lock:
                sent = self.calls.pop(str(item.get("call_id", "")), None)
                if sent is not None and call_item() in sent.items:
                    sent.items.remove(call_item())

    def _items(self, step: int, latest: str) -> list[dict[str, Any]]:
        if step >= len(self.script.steps):
            final = fill(self.script.final_text, self.script.final_quote, latest)
            return [_message(final)]
        items: list[dict[str, Any]] = []
        for n, block in enumerate(self.script.steps[step].blocks):
            if isinstance(block, TextBlock):
                items.append(_message(fill(block.text, block.quote, latest)))
            else:
                command = shell_command(block, self.skills, form=step + n)
                arguments = json.dumps({"cmd": command})
                items.append(
                    {
                        "type": "function_call",
                        "id": _new_id("fc"),
                        "call_id": f"call_s{step}_{n}_{_new_id('x')[2:10]}",
                        "name": "exec_command",
                        "arguments": arguments,
                    }
                )
        return items

    def _events(self, items: list[dict[str, Any]], model: str, size: int) -> Iterator[bytes]:
        rid = _new_id("resp")
        head = {"id": rid, "object": "response", "model": model, "status": "in_progress"}
        yield _sse({"type": "response.created", "response": head})
        for index, item in enumerate(items):
            yield _sse(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": ""}
                    if "arguments" in item
                    else {**item, "content": []},
                }
            )
            if item["type"] == "message":
                for piece in _pieces(item["content"][0]["text"]):
                    yield _sse(
                        {
                            "type": "response.output_text.delta",
                            "output_index": index,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": piece,
                        }
                    )
            else:
                for piece in _pieces(item["arguments"]):
                    yield _sse(
                        {
                            "type": "response.function_call_arguments.delta",
                            "output_index": index,
                            "item_id": item["id"],
                            "delta": piece,
                        }
                    )
            yield _sse({"type": "response.output_item.done", "output_index": index, "item": item})
        out = max(1, len(json.dumps(items)) // 4)
        usage = {
            "input_tokens": max(1, size // 4),
            "output_tokens": out,
            "total_tokens": max(1, size // 4) + out,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        done = {**head, "status": "completed", "output": items, "usage": usage}
        yield _sse({"type": "response.completed", "response": done})


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": _new_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }

"""A scripted stand-in for the Anthropic Messages API, served on loopback.

The real Claude Code CLI is pointed at it with ``ANTHROPIC_BASE_URL`` so an agent turn can be
replayed without a model or network. Each answer depends only on the request: the step served
is the number of assistant messages already in its conversation, and a reactive text in it may
quote the conversation's latest tool result (:mod:`evalkit.reference.reactive`). Counting
tool_result blocks would run ahead when one step holds parallel tool calls, and the CLI's
retries and its non-streaming fallback resend the same conversation, so they are served the
same step again.

Measured with CLI 2.1.328, ``-p``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` and
``DISABLE_TELEMETRY=1``: it sends only ``POST /v1/messages?beta=true``, streaming, one per agent
step, always with a ``tools`` key (``[]`` under ``--tools ""``) and the ``--model`` name as
given; no title, topic or count_tokens requests. Without those two variables it also sends
``HEAD /api/hello`` (answered 200); CLI 2.1.197 sends ``HEAD /`` once before its first
request even with them. A HEAD carries no conversation and is answered with none, so it is
recorded as a probe, which no check counts against the conversation. The Agent tool runs a
subagent whose requests carry an ``x-claude-code-agent-id`` header and start their own
conversation; served as steps they would replay the script from step 0 (and recurse). Such
requests, and any request without a ``tools`` key, are side requests: they get a short text
answer and never consume a scripted step.

Every request it sees is recorded (`served_record`, kept as a rep's evidence by evalkit, never
written inside the sandbox): what it asked, by key, and the turn it sent back in full, which
`scoring/tampering/served.py` holds the kept transcript to. The other wires' servers
(`reference/wire/`) record the same way, keyed as their agents' streams show their turns.

Faults make every ``/v1/messages`` request fail alike, to exercise the caller's handling: an
HTTP error status with an Anthropic-style error body, a response cut off mid-body (mid-block
when streaming), or headers followed by silence until :meth:`ScriptedServer.stop`.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import ssl
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

from evalkit.models import Script, ServedRequest, TextBlock
from evalkit.records.kept.redact import redact_value
from evalkit.reference.reactive import fill, latest_tool_result
from evalkit.reference.regression import version_in_user_agent
from evalkit.scoring.tampering.served import history_keys, root_key, turn_key
from evalkit.scoring.world.leaks import request_pieces

FAULTS = ("500", "529", "401", "429", "cut", "hang")

_ERROR_TYPES = {
    500: "api_error",
    529: "overloaded_error",
    401: "authentication_error",
    429: "rate_limit_error",
}
RETRY_AFTER_SECONDS = 1
"""What a 429 fault's ``retry-after`` header says: short, so a test waits little."""
LATENCY_ENV = "EVALKIT_SCRIPTED_LATENCY"
HELD_ENV = "EVALKIT_SCRIPTED_HELD"
"""A file the ``hang`` fault creates once it holds an answer, so a test knows the agent is
waiting on its first answer (with its whole process tree alive) without polling the server."""
SIDE_TEXT = "OK"
SUBAGENT_HEADER = "x-claude-code-agent-id"
_CHUNK = 48


@dataclass(frozen=True)
class RequestLog:
    """One ``/v1/messages`` request as the server saw and answered it."""

    path: str
    stream: bool
    model: str
    step: int | None
    """Assistant messages in the conversation; ``>= len(script.steps)`` means final text.
    None for side requests and faults, which serve no step."""
    status: int
    side: bool = False


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _assistant_turns(messages: Any) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(text: str) -> list[str]:
    """Split like the real API does, so clients must reassemble deltas."""
    return [text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK)] or [""]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-answer (or a fault cutting it) is routine, not a traceback."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test and harness output clean."""

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    # ------------------------------------------------------------------ plumbing

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply_head(
        self, status: int, content_type: str, length: int, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        self.send_header("request-id", _new_id("req"))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()

    def reply_json(
        self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
    ) -> None:
        body = json.dumps(payload).encode()
        self.reply_head(status, "application/json", len(body), extra)
        self.wfile.write(body)

    def open_stream(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", _new_id("req"))
        self.end_headers()
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def drop_connection(self) -> None:
        """End abruptly, without the closing chunk, as a network cut would."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ------------------------------------------------------------------ methods

    def do_HEAD(self) -> None:
        self.server.owner._note(f"HEAD {self.path}", kind="probe")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.read_body()
        self.server.owner._note(f"{self.command} {self.path}")
        self.reply_json(404, _error_body("not_found_error", f"no such path: {self.path}"))

    do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def do_POST(self) -> None:
        raw = self.read_body()
        path = urlsplit(self.path).path.rstrip("/")
        answered = path if self.server.owner.serves(path) else self.server.owner.PATH
        if path != answered:
            self.server.owner._note(f"POST {self.path}")
        if path == "/v1/messages/count_tokens":
            self.reply_json(200, {"input_tokens": _tokens(raw.decode(errors="replace"))})
            return
        if path != answered:
            self.reply_json(404, _error_body("not_found_error", f"no such path: {self.path}"))
            return
        try:
            request = json.loads(raw or b"{}")
            if not isinstance(request, dict):
                raise ValueError("request body is not an object")
        except ValueError as exc:
            self.server.owner._keep(ServedRequest(kind="other"))
            self.reply_json(400, _error_body("invalid_request_error", f"bad JSON: {exc}"))
            return
        self.server.owner._answer(self, request, len(raw))


class ScriptedServer:
    """Context manager. Binds 127.0.0.1 on an ephemeral port in a daemon thread.

    Another wire protocol subclasses it (`evalkit.reference.wire`): its own PATH and
    `_answer`, the same script, faults and plumbing."""

    PATH = "/v1/messages"

    def serves(self, path: str) -> bool:
        """Whether a POST to `path` is a model request this server answers."""
        return path == self.PATH

    def __init__(
        self,
        script: Script,
        fault: str | None = None,
        latency: float | None = None,
        tls: ssl.SSLContext | None = None,
        choose: Callable[[str], Script] | None = None,
        prompts: Mapping[str, Script] | None = None,
        scan: Callable[[dict[str, Any]], list[str]] | None = None,
        side_text: str | Callable[[str], str] = SIDE_TEXT,
    ) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; expected one of {FAULTS}")
        self.script = script
        self.choose = choose
        """The script a CLI version is served, by the version its User-Agent names."""
        self.prompts = dict(prompts or {})
        """Scripts by `prompt_digest` of a prompt: a runner that names no `policy:` model
        (`claude plugin eval` sends its own model name) is served the script of the case whose
        prompt opens the conversation; any other conversation gets `script`."""
        self.side_text = side_text
        """What a side request (a title, a judge's question: no tools) is answered; a
        function is handed the request's body."""
        self.versions: list[str] = []
        """The CLI version each /v1/messages request named ('' when none)."""
        self.fault = fault
        self.tls = tls
        """Serve https with this context: a stand-in for an https API host or gateway."""
        self.latency = latency_from_env() if latency is None else max(0.0, latency)
        """Seconds each ``/v1/messages`` answer waits first, as a real model would think."""
        self.base_url = ""
        self.requests: list[RequestLog] = []
        self.bodies: list[str] = []
        """Every /v1/messages request body as received, so a test can prove what text
        reached the model (and what never did)."""
        self.other_requests: list[str] = []
        self.scan = scan
        self.choose_body: Callable[[dict[str, Any]], Script] | None = None
        """The script a request is served, by what its body says (`policy:phrase`): read
        before `choose`'s version, which has the last word."""
        """Reads a request body for markers of the measurement (`scoring/world/leaks.py`)."""
        self.markers: list[str] = []
        """`marker:<channel>:<word>` of every marker a request carried, each once, in order."""
        self.record: list[ServedRequest] = []
        """Every request seen, as `served_record` keeps it."""
        """``METHOD path`` of everything that was not ``POST /v1/messages``."""
        self.turn_cap: int | None = None
        """Model turns served before the next request is held (`hold_past`)."""
        self.held = False
        """Whether a request past the turn cap came (and was held until `stop`)."""
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        self._released.clear()
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        if self.tls is not None:
            httpd.socket = self.tls.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        scheme = "https" if self.tls is not None else "http"
        self.base_url = f"{scheme}://127.0.0.1:{httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def hold_past(self, turns: int) -> None:
        """A turn cap evalkit holds a CLI to: `turns` model turns are served, and a request
        for the next is held unanswered (`held` then says so) until the server stops."""
        self.turn_cap = turns

    def _hold(self, handler: _Handler, step: int | None) -> bool:
        """Whether this request asks for a turn past the cap: if so it is held, unanswered."""
        if self.turn_cap is None or step is None or step < self.turn_cap:
            return False
        self.held = True
        self._released.wait()
        handler.drop_connection()
        return True

    def stop(self) -> None:
        """Stop serving and cut every open connection, hanging ones included."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._released.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ internals

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _note(self, request_line: str, kind: Literal["other", "probe"] = "other") -> None:
        with self._lock:
            self.other_requests.append(request_line)
        self._keep(ServedRequest(kind=kind))

    RECORDS = True
    """Whether this server keeps the record `scoring/tampering/served.py` reads (every wire's
    does; a stand-in server in a test may not)."""

    def served_record(self) -> str | None:
        """The record of every request seen, one JSON line each, in the order they came;
        None for a server that keeps none."""
        if not self.RECORDS:
            return None
        with self._lock:
            return "".join(entry.model_dump_json() + "\n" for entry in self.record)

    def _keep(self, entry: ServedRequest) -> ServedRequest:
        with self._lock:
            self.record.append(entry)
        return entry

    def _asked(self, request: dict[str, Any], side: bool) -> ServedRequest:
        """A model request's record, kept as it arrives (kind `turn` or `side` for now)."""
        messages = request.get("messages")
        said = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"] \
            if isinstance(messages, list) else []  # fmt: skip
        return self._keep(ServedRequest(
            kind="side" if side else "turn", root=root_key(messages),
            history=history_keys(redact_value(said)),
        ))  # fmt: skip

    def request_pieces(self, body: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
        """(channel, text, the call's own input) of what the world put in one request of
        this wire (`scoring/world/leaks.py` reads the Messages API's)."""
        return request_pieces(body)

    def _received(self, request: dict[str, Any]) -> None:
        """A model request's body kept, and read by the scan when this server has one."""
        with self._lock:
            self.bodies.append(json.dumps(request, ensure_ascii=False))
        if self.scan is not None:
            found = self.scan(request)
            with self._lock:
                self.markers += [m for m in found if m not in self.markers]

    def _log(self, entry: RequestLog) -> None:
        with self._lock:
            self.requests.append(entry)

    def _answer(self, handler: _Handler, request: dict[str, Any], size: int) -> None:
        self._received(request)
        stream = bool(request.get("stream"))
        model = str(request.get("model", ""))
        side = "tools" not in request or bool(handler.headers.get(SUBAGENT_HEADER))
        step = None if side else _assistant_turns(request.get("messages"))
        asked = self._asked(request, side)
        asked.kind = "held" if self.turn_cap is not None and step is not None and \
            step >= self.turn_cap else asked.kind  # fmt: skip
        if self._hold(handler, step):
            return
        version = version_in_user_agent(handler.headers.get("User-Agent", ""))
        with self._lock:
            self.versions.append(version)
        script = self.choose_body(request) if self.choose_body is not None else self.script
        script = self.choose(version) if self.choose is not None else script
        if self.prompts and self.choose is None:
            script = _by_prompt(self.prompts, request.get("messages")) or script
        stopped = bool(self.latency) and self._released.wait(self.latency)
        if stopped or self.fault is not None:
            asked.kind = "fault"  # it serves no turn, whatever follows
        if stopped:
            handler.drop_connection()
            return
        if self.fault in ("500", "529", "401", "429"):
            status = int(self.fault)
            self._log(RequestLog(handler.path, stream, model, None, status, side))
            error = _error_body(_ERROR_TYPES[status], f"scripted fault {status}")
            extra = {"retry-after": str(RETRY_AFTER_SECONDS)} if status == 429 else None
            handler.reply_json(status, error, extra)
            return

        latest = latest_tool_result(request.get("messages"))
        blocks, stop_reason = self._blocks(script, step, latest)
        if step is None and callable(self.side_text):
            blocks = [{"type": "text", "text": self.side_text(json.dumps(request))}]
        message = _message(model, blocks, stop_reason, size)
        if self.fault in ("hang", "cut"):
            self._log(RequestLog(handler.path, stream, model, None, 200, side))
            self._break_off(handler, message, stream)
            return

        self._log(RequestLog(handler.path, stream, model, step, 200, side))
        if not stream:
            handler.reply_json(200, message)
        else:
            handler.open_stream("text/event-stream")
            for data in _events(message):
                handler.write_chunk(data)
            handler.write_chunk(b"")
        asked.served = turn_key(redact_value(blocks))  # sent in full: a write that broke raised

    def _break_off(self, handler: _Handler, message: dict[str, Any], stream: bool) -> None:
        """A hang (the answer opened and never sent, until released) or a cut (half of it,
        then the connection dropped)."""
        if self.fault == "hang":
            handler.open_stream("text/event-stream" if stream else "application/json")
            _say_held()
            self._released.wait()
        elif stream:
            handler.open_stream("text/event-stream")
            for data in list(_events(message))[:4]:
                handler.write_chunk(data)
        else:
            body = json.dumps(message).encode()
            handler.reply_head(200, "application/json", len(body))
            handler.wfile.write(body[: len(body) // 2])
        handler.drop_connection()

    def _blocks(
        self, script: Script, step: int | None, latest: str
    ) -> tuple[list[dict[str, Any]], str]:
        """The content blocks and stop reason a step (or side request) answers with; a
        reactive text quotes from ``latest``, the conversation's last tool result."""
        if step is None:
            side = self.side_text if isinstance(self.side_text, str) else SIDE_TEXT
            return [{"type": "text", "text": side}], "end_turn"
        if step >= len(script.steps):
            final = fill(script.final_text, script.final_quote, latest)
            return [{"type": "text", "text": final}], "end_turn"
        blocks: list[dict[str, Any]] = []
        for block in script.steps[step].blocks:
            if isinstance(block, TextBlock):
                blocks.append({"type": "text", "text": fill(block.text, block.quote, latest)})
            else:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": _new_id("toolu"),
                        "name": block.name,
                        "input": block.input,
                    }
                )
        uses_tools = any(b["type"] == "tool_use" for b in blocks)
        return blocks, "tool_use" if uses_tools else "end_turn"


def _message(
    model: str, blocks: list[dict[str, Any]], stop_reason: str, size: int
) -> dict[str, Any]:
    """The Messages API answer holding BLOCKS, with usage estimated from the sizes."""
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(1, size // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": _tokens(json.dumps(blocks)),
        },
    }


def prompt_digest(text: str) -> str:
    """sha256 of a prompt with its whitespace collapsed: `task_digest` of a scenario whose
    Task is that prompt, so a script can be keyed by it without the prompt being kept."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def _by_prompt(prompts: Mapping[str, Script], messages: Any) -> Script | None:
    """The script whose prompt is a text block of the conversation's first user message."""
    first = (
        next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
        if isinstance(messages, list)
        else None
    )
    content = first.get("content") if first is not None else None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            found = prompts.get(prompt_digest(block["text"]))
            if found is not None:
                return found
    return None


def _say_held() -> None:
    held = os.environ.get(HELD_ENV)
    if held:
        try:
            with open(held, "a", encoding="utf-8"):
                pass
        except OSError:
            pass


def latency_from_env() -> float:
    """EVALKIT_SCRIPTED_LATENCY in seconds; unset, empty or unreadable means none."""
    try:
        return max(0.0, float(os.environ.get(LATENCY_ENV) or 0))
    except ValueError:
        return 0.0


def _events(message: dict[str, Any]) -> Iterator[bytes]:
    """The SSE events the real API streams for ``message``, in order."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield _sse("message_start", {"type": "message_start", "message": start})
    yield _sse("ping", {"type": "ping"})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(json.dumps(block["input"]))
            ]
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})

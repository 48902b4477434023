"""Each rep's own receiver of its agent's OTLP log export: the CLI's word on what fired.

One receiver per rep, on the host's loopback, for scripted and real-model reps alike: no
export of one rep can land in another's evidence, and none leaves the machine. A confined
rep reaches it only through a bridge of its sandbox (`backends/confine.py`), as it reaches
its API; an unconfined one at its loopback address. It takes `POST /v1/logs` as
`application/json` (the export protocol the rep is told to use) and refuses everything
else; each body, checked to be JSON and capped, is kept as one line of `telemetry.jsonl`.

The CLI flushes its last export as it exits, so `settle` waits, briefly and boundedly, for
requests still being read when the process has ended.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalkit.run.agents.base import Capabilities

LOGS_PATH = "/v1/logs"
BODY_CAP = 4 << 20
TOTAL_CAP = 16 << 20
SETTLE_SECONDS = 3.0
INSIDE_PORT = 4318
"""The OTLP/HTTP port a confined rep's bridge listens on inside (the protocol's own)."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a hostile client's request line never reaches our stderr

    def do_POST(self) -> None:
        self.server.busy(+1)
        try:
            self._post()
        finally:
            self.server.busy(-1)

    def _post(self) -> None:
        size = self.headers.get("Content-Length", "")
        kind = self.headers.get("Content-Type", "").split(";")[0].strip()
        if self.path.split("?")[0] != LOGS_PATH or not size.isdigit():
            self._reply(404)
            return
        if kind != "application/json" or int(size) > BODY_CAP:
            self._reply(415 if kind != "application/json" else 413)
            return
        body = self.rfile.read(int(size))
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            self._reply(400)
            return
        self.server.keep(json.dumps(parsed, separators=(",", ":"), ensure_ascii=False))
        self._reply(200, b"{}")

    def do_GET(self) -> None:
        self._reply(404)

    def _reply(self, code: int, body: bytes = b"") -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lines: list[str] = []
        self.size = 0
        self.active = 0
        self.lock = threading.Lock()

    def busy(self, step: int) -> None:
        with self.lock:
            self.active += step

    def keep(self, line: str) -> None:
        with self.lock:
            if self.size + len(line) <= TOTAL_CAP:
                self.lines.append(line)
                self.size += len(line) + 1


class Receiver:
    """A rep's receiver, started; `text` is what it kept, `stop` ends it."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="evalkit-telemetry",
            daemon=True,
        )
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}{LOGS_PATH}"

    def settle(self, seconds: float = SETTLE_SECONDS) -> None:
        """Wait until no request is being read, at most `seconds`."""
        end = time.monotonic() + seconds
        while self._server.active and time.monotonic() < end:
            time.sleep(0.02)

    def text(self) -> str:
        with self._server.lock:
            return "".join(line + "\n" for line in self._server.lines)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def inside_url() -> str:
    """Where a confined rep's CLI sends its export: its bridge's port on its loopback."""
    return f"http://127.0.0.1:{INSIDE_PORT}{LOGS_PATH}"


def start_receiver(caps: Capabilities, reachable: bool) -> Receiver | None:
    """A receiver for an agent that exports labels, where its rep can reach one."""
    return Receiver() if caps.labels_endpoint and reachable else None


def labelled_env(
    caps: Capabilities, env: dict[str, str], receiver: Receiver | None, unconfined: bool
) -> dict[str, str]:
    """The rep's environment with no exporter but to its receiver: every OTEL_ variable a
    suite's `environment:` set is dropped (the caller's never pass in), so neither the
    prompts nor the tools' details are ever logged and nothing is sent elsewhere."""
    if receiver is None:
        return env
    own = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    own.update(caps.labels_env)
    own[caps.labels_endpoint] = receiver.url if unconfined else inside_url()
    return own

"""Every credential and base-URL variable the docs name for Claude Code, Codex and Gemini
reaches the pinned CLI in the form it reads, proved against a stand-in API of this file's
own (not evalkit's scripted servers) served over TLS on loopback and reached through the confined
rep's one door, evalkit's CONNECT proxy. Its certificate comes from a CA made here and
trusted through the agent's own CA variable, in this test's environment only.

Measured with codex-cli 0.169.0: with OPENAI_API_KEY alone it sends no key (401, every rep an
ERROR), and it ignores OPENAI_BASE_URL (its setting is `openai_base_url`), calling its
default host, which the proxy refuses; both reps here must reach the stand-in and score."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e
KEY = "sk-standin-0123456789abcdef"


@dataclass
class Seen:
    """What the stand-in was asked: `METHOD path` and the credential each request carried."""

    requests: list[tuple[str, str]] = field(default_factory=list)

    def answered(self, path: str, credential: str) -> bool:
        return any(p.startswith(path) and c == credential for p, c in self.requests)


def _sse(events: list[dict[str, Any]], named: bool) -> bytes:
    out = b""
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out += f"{head}data: {json.dumps(event)}\n\n".encode()
    return out


def _responses_answer() -> bytes:
    """A streamed Responses API answer: one final message."""
    text = {"type": "output_text", "text": "Nothing to do.", "annotations": []}
    message = {"type": "message", "id": "msg_s1", "role": "assistant", "status": "completed",
               "content": [text]}  # fmt: skip
    head = {"id": "resp_s1", "object": "response", "model": "gpt-5", "status": "in_progress"}
    usage = {"input_tokens": 3, "output_tokens": 3, "total_tokens": 6}
    done = {**head, "status": "completed", "output": [message], "usage": usage}
    return _sse(
        [
            {"type": "response.created", "response": head},
            {"type": "response.output_item.done", "output_index": 0, "item": message},
            {"type": "response.completed", "response": done},
        ],
        named=True,
    )


def _messages_answer() -> bytes:
    """A streamed Messages API answer: one text block, the turn ended."""
    start = {"id": "msg_s1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
             "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 3, "output_tokens": 1}}  # fmt: skip
    return _sse(
        [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": "Nothing to do."}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 3}},
            {"type": "message_stop"},
        ],
        named=True,
    )  # fmt: skip


def _gemini_answer(stream: bool) -> bytes:
    candidate = {"content": {"role": "model", "parts": [{"text": "Nothing to do."}]},
                 "finishReason": "STOP", "index": 0}  # fmt: skip
    usage = {"promptTokenCount": 3, "candidatesTokenCount": 3, "totalTokenCount": 6}
    body = {"candidates": [candidate], "usageMetadata": usage}
    return f"data: {json.dumps(body)}\r\n\r\n".encode() if stream else json.dumps(body).encode()


class _StandIn(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: Seen

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # a WebSocket upgrade Codex tries first: not offered
        self.seen.requests.append((f"GET {self.path}", self._credential()))
        self._reply(404, "text/plain", b"")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        credential = self._credential()
        self.seen.requests.append((f"POST {self.path}", credential))
        if credential != KEY:
            error = {"error": {"message": "no key", "type": "invalid_request_error"}}
            self._reply(401, "application/json", json.dumps(error).encode())
        elif self.path.startswith("/v1/messages") and "count_tokens" not in self.path:
            self._reply(200, "text/event-stream", _messages_answer())
        elif self.path.startswith("/v1/responses"):
            self._reply(200, "text/event-stream", _responses_answer())
        elif ":streamGenerateContent" in self.path:
            self._reply(200, "text/event-stream", _gemini_answer(stream=True))
        elif ":generateContent" in self.path:
            self._reply(200, "application/json", _gemini_answer(stream=False))
        else:
            self._reply(404, "text/plain", b"")

    def _credential(self) -> str:
        bearer = self.headers.get("Authorization", "").removeprefix("Bearer ")
        return bearer or self.headers.get("x-api-key") or self.headers.get("x-goog-api-key", "")


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A CA (trusted by the agent for this test only) and a leaf for 127.0.0.1 signed by it:
    Codex's TLS refuses a self-signed leaf that is its own CA."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    names = ("ca.pem", "ca.key", "key.pem", "leaf.csr", "cert.pem")
    ca, ca_key, key, csr, cert = (folder / n for n in names)
    ext = folder / "leaf.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "extendedKeyUsage=serverAuth\n")  # fmt: skip
    steps = [
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
         "-days", "1", "-subj", "/CN=stand-in CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
         "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
         "-days", "1", "-extfile", ext],
    ]  # fmt: skip
    for step in steps:
        subprocess.run(["openssl", *map(str, step)], check=True, capture_output=True, timeout=60)
    return ca, cert, key


@pytest.fixture
def stand_in(certificates: tuple[Path, Path, Path]) -> Iterator[tuple[str, Seen]]:
    _, cert, key = certificates
    seen = Seen()
    handler = type("Handler", (_StandIn,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    serve = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    serve.daemon = True
    serve.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


CASES = [
    pytest.param("claude", "sonnet", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "",
                 "NODE_EXTRA_CA_CERTS", "POST /v1/messages", id="claude-ANTHROPIC_API_KEY"),
    pytest.param("claude", "sonnet", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "",
                 "NODE_EXTRA_CA_CERTS", "POST /v1/messages", id="claude-ANTHROPIC_AUTH_TOKEN"),
    pytest.param("claude", "sonnet", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL", "",
                 "NODE_EXTRA_CA_CERTS", "POST /v1/messages", id="claude-CLAUDE_CODE_OAUTH_TOKEN"),
    pytest.param("codex", "gpt-5", "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1", "SSL_CERT_FILE",
                 "POST /v1/responses", id="codex-OPENAI_API_KEY"),
    pytest.param("codex", "gpt-5", "CODEX_API_KEY", "OPENAI_BASE_URL", "/v1",
                 "CODEX_CA_CERTIFICATE", "POST /v1/responses", id="codex-CODEX_API_KEY"),
    pytest.param("gemini", "gemini-2.5-pro", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "",
                 "NODE_EXTRA_CA_CERTS", "POST /v1beta/models/gemini-2.5-pro:streamGenerateContent",
                 id="gemini-GEMINI_API_KEY"),
]  # fmt: skip


@pytest.mark.parametrize(("agent", "model", "key", "base", "path", "ca", "asked"), CASES)
def test_each_documented_variable_reaches_the_agent_through_the_proxy_and_the_rep_scores(
    agent: str, model: str, key: str, base: str, path: str, ca: str, asked: str,
    stand_in: tuple[str, Seen], certificates: tuple[Path, Path, Path], kit: Kit,
) -> None:  # fmt: skip
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    url, seen = stand_in
    kit.extra_env.update({key: KEY, base: url + path, ca: str(certificates[0]),
                          "EVALKIT_JUDGE_CMD": "echo NO"})  # fmt: skip
    work = kit.base / "work"
    done = kit.run("run", "P1", model, str(work), "--agent", agent, "--skip-preflight",
                   "--timeout", "240", timeout=400)  # fmt: skip
    assert done.returncode == 0, done.why()
    [row] = kit.tsv(work)
    assert row["verdict"] != "ERROR", row["reasons"]
    assert seen.answered(asked, KEY), [p for p, _ in seen.requests]
    [line] = kit.manifest(work)
    declared = line["declarations"]
    assert declared["confinement"] == "bwrap"  # its one door out is the CONNECT proxy
    assert KEY not in json.dumps(line) and key in json.dumps(declared["capabilities"]) + json.dumps(
        declared["isolation_env"]
    )

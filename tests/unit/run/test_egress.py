"""The doors out of a confined rep: one forwarder to one endpoint, and a CONNECT proxy that
admits only the API hosts."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.run.agents.registry import adapter
from evalkit.run.backends.egress import ConnectProxy, Forwarder


def allowed_hosts(env: dict[str, str], agent: str = "claude") -> set[tuple[str, int]]:
    return adapter(agent).api_hosts(env)


@pytest.fixture
def echo() -> Iterator[int]:
    """A loopback TCP server that answers each connection with what it received, upper-cased."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(conn.recv(1024).upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.shutdown(socket.SHUT_RDWR)
    server.close()
    thread.join(timeout=10)


def _unix(path: Path, payload: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        client.sendall(payload)
        received = b""
        while chunk := client.recv(1024):
            received += chunk
            if payload.startswith(b"CONNECT") and b"\r\n\r\n" in received and b"403" in received:
                break
        return received


@pytest.fixture(autouse=True)
def no_thread_left() -> Iterator[None]:
    """A door's threads end with it: a thread left running would turn later forked work
    in this process into threads (evalkit/forked.py)."""
    before = threading.active_count()
    yield
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before, [t.name for t in threading.enumerate()]


def test_the_forwarder_joins_each_connection_to_its_endpoint(tmp_path: Path, echo: int) -> None:
    door = Forwarder(tmp_path / "api.sock", ("127.0.0.1", echo))
    door.start()
    try:
        assert _unix(tmp_path / "api.sock", b"hello") == b"HELLO"
    finally:
        door.stop()


def test_the_proxy_tunnels_an_allowed_host_and_refuses_any_other(tmp_path: Path, echo: int) -> None:
    door = ConnectProxy(tmp_path / "proxy.sock", {("127.0.0.1", echo)})
    door.start()
    try:
        allowed = _unix(
            tmp_path / "proxy.sock", f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\nhi".encode()
        )
        assert allowed.startswith(b"HTTP/1.1 200") and allowed.endswith(b"HI")
        other = _unix(tmp_path / "proxy.sock", b"CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n")
        assert other.startswith(b"HTTP/1.1 403")
        assert door.refused == ["CONNECT 127.0.0.1:9 HTTP/1.1"]
    finally:
        door.stop()


def test_the_allowed_hosts_are_the_configured_api_hosts_only() -> None:
    assert allowed_hosts({}) == {("api.anthropic.com", 443)}
    assert allowed_hosts({"ANTHROPIC_BASE_URL": "https://gw.example.com:8443/v"}) == {
        ("gw.example.com", 8443)
    }
    bedrock = allowed_hosts({"ANTHROPIC_BASE_URL": "", "CLAUDE_CODE_USE_BEDROCK": "1",
                             "AWS_REGION": "eu-west-1"})  # fmt: skip
    assert ("bedrock-runtime.eu-west-1.amazonaws.com", 443) in bedrock
    assert allowed_hosts({"ANTHROPIC_BASE_URL": "ftp://x"}) == set()


def test_another_agents_real_model_may_reach_its_own_api_host_and_not_anthropics() -> None:
    assert allowed_hosts({}, "codex") == {("api.openai.com", 443)}
    assert allowed_hosts({}, "gemini") == {("generativelanguage.googleapis.com", 443)}
    gateway = {"OPENAI_BASE_URL": "https://gw.example.com:8443/v1"}
    assert allowed_hosts(gateway, "codex") == {("gw.example.com", 8443)}
    assert allowed_hosts({"GOOGLE_GEMINI_BASE_URL": "ftp://x"}, "gemini") == set()

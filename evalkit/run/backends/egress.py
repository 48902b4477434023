"""The doors out of a confined rep's network namespace, served in evalkit's own process.

Each listens on a Unix socket mounted into the rep's sandbox, where a socat bridge makes it
a loopback port; being threads of evalkit, they end with it and never outlive a rep.

- `Forwarder`: every connection goes to one host and port (the rep's scripted server, or an
  `http://` ANTHROPIC_BASE_URL's host).
- `ConnectProxy`: an allow-listing CONNECT proxy for https API hosts (`HTTPS_PROXY` inside):
  a `CONNECT host:port` to an allowed host is tunnelled as is, TLS end to end between the CLI
  and the host; anything else is answered 403 and closed. Proxy variables alone confine
  nothing: the namespace, with these sockets its only doors, does.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

HEADER_LIMIT = 8192
CONNECT_SECONDS = 30.0
DEFAULT_API_HOST = ("api.anthropic.com", 443)


def base_url_host(
    env: Mapping[str, str], variable: str, default: tuple[str, int]
) -> set[tuple[str, int]]:
    """The host of an https base URL in `variable`, else `default` when it is unset; none for
    a base URL of another scheme (an http one is reached through a forwarder, if at all)."""
    own = urlsplit(env.get(variable, ""))
    if own.scheme == "https" and own.hostname:
        return {(own.hostname, own.port or 443)}
    return set() if own.scheme else {default}


def anthropic_hosts(env: Mapping[str, str]) -> set[tuple[str, int]]:
    """The API host(s) a real Claude Code rep may reach over https: ANTHROPIC_BASE_URL's,
    else the default API host; Bedrock's and Vertex's regional endpoints when they are
    switched on."""
    hosts = base_url_host(env, "ANTHROPIC_BASE_URL", DEFAULT_API_HOST)
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if env.get("CLAUDE_CODE_USE_BEDROCK") and region:
        hosts.add((f"bedrock-runtime.{region}.amazonaws.com", 443))
    vertex_region = env.get("CLOUD_ML_REGION")
    if env.get("CLAUDE_CODE_USE_VERTEX") and vertex_region:
        hosts.add((f"{vertex_region}-aiplatform.googleapis.com", 443))
        hosts.add(("aiplatform.googleapis.com", 443))
        hosts.add(("oauth2.googleapis.com", 443))
    return hosts


class _Door:
    """A Unix socket served on daemon threads, one per connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._closed = threading.Event()

    def start(self) -> _Door:
        self._server.bind(str(self.path))
        os.chmod(self.path, 0o600)
        self._server.listen(64)
        threading.Thread(target=self._accept, name="evalkit-egress", daemon=True).start()
        return self

    def stop(self) -> None:
        self._closed.set()
        try:
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._server.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        raise NotImplementedError


class Forwarder(_Door):
    """Every connection to the socket is joined to one TCP host and port."""

    def __init__(self, path: Path, target: tuple[str, int]) -> None:
        super().__init__(path)
        self.target = target

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                upstream = socket.create_connection(self.target, timeout=CONNECT_SECONDS)
            except OSError:
                return
            with upstream:
                upstream.settimeout(None)
                _join(conn, upstream)


class ConnectProxy(_Door):
    """Serves CONNECT for the hosts allowed; everything else gets a 403."""

    def __init__(self, path: Path, allowed: set[tuple[str, int]]) -> None:
        super().__init__(path)
        self.allowed = allowed
        self.refused: list[str] = []

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < HEADER_LIMIT:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            target = _target(line)
            if target is None or target not in self.allowed:
                self.refused.append(line[:200])
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            try:
                upstream = socket.create_connection(target, timeout=CONNECT_SECONDS)
            except OSError:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            with upstream:
                upstream.settimeout(None)
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                rest = head.split(b"\r\n\r\n", 1)[1]
                if rest:
                    upstream.sendall(rest)
                _join(conn, upstream)


def _target(line: str) -> tuple[str, int] | None:
    parts = line.split()
    if len(parts) != 3 or parts[0] != "CONNECT" or not parts[2].startswith("HTTP/"):
        return None
    host, _, port = parts[1].rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]").lower(), int(port)


def _join(inner: socket.socket, outer: socket.socket) -> None:
    back = threading.Thread(target=_pump, args=(outer, inner), daemon=True)
    back.start()
    _pump(inner, outer)
    back.join()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

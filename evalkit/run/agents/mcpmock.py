"""A fixed MCP server over stdio: each tool answers with the text it was given. Standalone
(no evalkit import), since it runs inside a confined rep under the system `python3`.

usage: mcpmock.py SPEC SERVER
SPEC is JSON: {SERVER: {"tools": [tools/list entries], "answers": {TOOL: {"text", "error"}}}}.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PROTOCOL = "2025-06-18"


def answer(server: dict[str, Any], name: str, method: str, params: dict[str, Any]) -> Any:
    """The result of one request; a KeyError for a method the server does not have."""
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion") or PROTOCOL,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": name, "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": server["tools"]}
    if method == "tools/call":
        fixed = server["answers"].get(params.get("name"))
        if fixed is None:
            return {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}
        return {"content": [{"type": "text", "text": fixed["text"]}], "isError": fixed["error"]}
    raise KeyError(method)


def reply(server: dict[str, Any], name: str, line: str) -> dict[str, Any] | None:
    """The response to one line; None for a notification."""
    try:
        message = json.loads(line)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
    if not isinstance(message, dict) or "id" not in message:
        return None
    params = message.get("params")
    try:
        result = answer(
            server, name, str(message.get("method")), params if isinstance(params, dict) else {}
        )
    except KeyError:
        error = {"code": -32601, "message": "method not found"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main(argv: list[str]) -> int:
    spec, name = argv[1:3]
    with open(spec, encoding="utf-8") as source:
        server = json.load(source)[name]
    for line in sys.stdin:
        if not line.strip():
            continue
        response = reply(server, name, line)
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

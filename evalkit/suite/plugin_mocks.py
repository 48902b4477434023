"""A plugin eval folder's MCP mocks (`<evaldir>/mocks/<server>/<tool>.md`), read into the
spec evalkit's fixed server serves. The answers are instrument: they go into the translated
suite, never into the plugin copy the agent loads.

A fixed mock's body is its answer; `error:` in its front matter makes the answer an error
result. `_tools.json` is a saved `tools/list` for the server. A `type: agent` mock needs a
model to answer, so it is refused in one line naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError
from evalkit.suite.scenarios import decode_utf8, split_front_matter
from evalkit.suite.yamlio import load_text

MOCKS = "mocks"
SAVED_TOOLS = "_tools.json"
AGENT_SERVER = "_server.md"


def _mock(path: Path) -> dict[str, Any]:
    """{"text", "error"} of one fixed mock file."""
    text = decode_utf8(path.read_bytes(), path)
    front: Any = {}
    body = text
    if text.startswith("---"):
        raw, body, _ = split_front_matter(text, path)
        front = load_text(raw, path, 2) or {}
        if not isinstance(front, dict):
            raise ConfigError(f"{path}: front matter: must be a mapping")
    kind = front.get("type", "fixed")
    if kind == "agent":
        raise ConfigError(f"{path}: type: agent mocks need a model to answer; evalkit serves "
                          "only fixed mocks (type: fixed)")  # fmt: skip
    if kind != "fixed":
        raise ConfigError(f"{path}: type: {kind!r} is not a mock type (fixed or agent)")
    error = front.get("error")
    if error is not None and not isinstance(error, str | bool):
        raise ConfigError(f"{path}: error: must be a message or true")
    if isinstance(error, str) and error.strip():
        return {"text": error.strip(), "error": True}
    return {"text": body.strip("\n"), "error": bool(error)}


def _saved_tools(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(decode_utf8(path.read_bytes(), path))
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools
    ):
        raise ConfigError(f"{path}: tools: must be a tools/list (a list of named tools)")
    return tools


def _server(folder: Path) -> dict[str, Any]:
    if (folder / AGENT_SERVER).is_file():
        raise ConfigError(f"{folder / AGENT_SERVER}: an agent server needs a model to answer; "
                          "evalkit serves only fixed mocks (type: fixed)")  # fmt: skip
    answers = {p.stem: _mock(p) for p in sorted(folder.glob("*.md"))}
    saved = folder / SAVED_TOOLS
    if saved.is_file():
        tools = _saved_tools(saved)
    else:
        tools = [{"name": name, "description": f"the {name} tool of {folder.name}",
                  "inputSchema": {"type": "object"}} for name in answers]  # fmt: skip
    return {"tools": tools, "answers": answers}


def read_mocks(evals: Path) -> dict[str, Any]:
    """server -> {"tools", "answers"}; empty when the eval folder has no mocks."""
    root = evals / MOCKS
    if not root.is_dir():
        return {}
    servers = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    return {folder.name: _server(folder) for folder in servers}

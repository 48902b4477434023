"""A suite's fixed MCP mocks, served to a Claude Code rep: the spec and evalkit's server
script copied into the rep's scratch folder (read-only to the agent), and a `--mcp-config`
naming one stdio server per mock server, with `--strict-mcp-config` so that no other MCP
server reaches the rep. The server is started by the `python3` on PATH: a confined rep
reaches neither evalkit's own folder nor its virtual environment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evalkit.suite.config import Suite

SERVER = Path(__file__).resolve().parent / "agents" / "mcpmock.py"
FOLDER = "mcp-mocks"


def mock_arguments(suite: Suite, scratch: Path) -> list[str]:
    """The CLI's MCP flags for this rep (none when the suite has no mocks); writes the
    files they name under `scratch/mcp-mocks/`."""
    rel = suite.config.mcp_mocks
    if rel is None:
        return []
    folder = scratch / FOLDER
    folder.mkdir()
    spec = folder / "mocks.json"
    shutil.copyfile(suite.root / rel, spec)
    server = folder / SERVER.name
    shutil.copyfile(SERVER, server)
    names = sorted(json.loads(spec.read_text(encoding="utf-8")))
    servers = {n: {"type": "stdio", "command": "python3", "args": [str(server), str(spec), n]}
               for n in names}  # fmt: skip
    config = folder / "mcp-config.json"
    config.write_text(json.dumps({"mcpServers": servers}, indent=1), encoding="utf-8")
    return ["--mcp-config", str(config), "--strict-mcp-config"]


def mock_folders(scratch: Path) -> list[Path]:
    """What a confined rep must read to start its mock servers."""
    folder = scratch / FOLDER
    return [folder] if folder.is_dir() else []

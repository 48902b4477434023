"""A plugin eval folder's fixed MCP mocks: read into the translated suite (never into the
plugin copy), served by evalkit's stdio server speaking JSON-RPC 2.0, handed to the CLI as
its only MCP servers, and a `type: agent` mock refused in one line naming its file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import ConfigError
from evalkit.run.mcp_mocks import SERVER, mock_arguments, mock_folders
from evalkit.suite.config import load_suite
from tests.unit.suite.test_plugin_evals import two_cases

MARKER = "fixed-answer-7f3a"


def with_mocks(tmp_path: Path, files: dict[str, str]) -> Path:
    root = two_cases(tmp_path)
    for rel, text in files.items():
        path = root / "evals" / "mocks" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def spoken(
    spec: dict[str, Any], server: str, requests: list[dict[str, Any]], tmp: Path
) -> list[Any]:
    path = tmp / "spec.json"
    path.write_text(json.dumps(spec))
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([sys.executable, str(SERVER), str(path), server], input=lines,
                          capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_server_answers_initialize_list_and_call_with_the_fixed_text(tmp_path: Path) -> None:
    suite = load_suite(with_mocks(tmp_path, {
        "tickets/lookup.md": f"{MARKER}\n",
        "tickets/close.md": "---\nerror: the ticket is locked\n---\nunused\n",
    }))  # fmt: skip
    assert suite.config.mcp_mocks is not None
    spec = json.loads((suite.root / suite.config.mcp_mocks).read_text())
    out = spoken(spec, "tickets", [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "lookup", "arguments": {"id": 4}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "close"}},
        {"jsonrpc": "2.0", "id": 5, "method": "resources/list"},
    ], tmp_path)  # fmt: skip
    assert [r["id"] for r in out] == [1, 2, 3, 4, 5]  # the notification has no reply
    assert out[0]["result"]["protocolVersion"] == "2025-06-18"
    assert "tools" in out[0]["result"]["capabilities"]
    assert sorted(t["name"] for t in out[1]["result"]["tools"]) == ["close", "lookup"]
    assert out[2]["result"] == {"content": [{"type": "text", "text": MARKER}], "isError": False}
    assert out[3]["result"]["isError"] is True
    assert out[3]["result"]["content"][0]["text"] == "the ticket is locked"
    assert out[4]["error"]["code"] == -32601


def test_a_saved_tools_list_is_what_the_server_lists(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}}
    saved = {"tools": [{"name": "lookup", "description": "find a ticket", "inputSchema": schema}]}
    files = {"tickets/lookup.md": "x\n", "tickets/_tools.json": json.dumps(saved)}
    suite = load_suite(with_mocks(tmp_path, files))
    assert suite.config.mcp_mocks is not None
    spec = json.loads((suite.root / suite.config.mcp_mocks).read_text())
    (listed,) = spoken(spec, "tickets", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],
                       tmp_path)  # fmt: skip
    assert listed["result"] == saved


def test_the_answers_are_instrument_never_in_the_plugin_copy(tmp_path: Path) -> None:
    suite = load_suite(with_mocks(tmp_path, {"tickets/lookup.md": f"{MARKER}\n"}))
    (copy,) = suite.plugin_dirs()
    listed = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert listed == [".claude-plugin/plugin.json", "skills/hello/SKILL.md"]
    from evalkit.suite.lock import current_hashes

    assert "mcp-mocks" in current_hashes(suite)


def test_each_rep_gets_the_mocks_as_its_only_mcp_servers(tmp_path: Path) -> None:
    suite = load_suite(with_mocks(tmp_path, {"tickets/lookup.md": f"{MARKER}\n"}))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    args = mock_arguments(suite, scratch)
    assert args[0] == "--mcp-config" and args[2] == "--strict-mcp-config"
    config = json.loads(Path(args[1]).read_text())["mcpServers"]
    assert list(config) == ["tickets"]
    assert config["tickets"]["command"] == "python3"
    assert all(Path(a).is_relative_to(scratch) for a in config["tickets"]["args"][:2])
    assert mock_folders(scratch) == [scratch / "mcp-mocks"]


def test_a_suite_without_mocks_gives_the_cli_no_mcp_flags(tmp_path: Path) -> None:
    suite = load_suite(two_cases(tmp_path))
    assert mock_arguments(suite, tmp_path) == []
    assert mock_folders(tmp_path) == []


@pytest.mark.parametrize("rel,text", [
    ("tickets/triage.md", "---\ntype: agent\n---\nAnswer as a triage bot.\n"),
    ("tickets/_server.md", "---\ntools: [triage]\n---\nAnswer as a triage bot.\n"),
])  # fmt: skip
def test_an_agent_mock_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, rel: str, text: str
) -> None:
    root = with_mocks(tmp_path, {rel: text})
    with pytest.raises(ConfigError) as err:
        load_suite(root)
    message = str(err.value)
    assert "\n" not in message
    assert str(root / "evals" / "mocks" / rel) in message
    # refused before the suite is written (only the writing lock sits in its folder)
    assert not (root / "evals" / ".evalkit-suite" / "evalkit.yaml").exists()

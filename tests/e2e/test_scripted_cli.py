"""The real Claude Code CLI, played a script by the scripted model server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalkit.models import Script, Step, TextBlock, ToolUseBlock
from evalkit.reference.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

MODEL = "policy-test"


@dataclass
class Run:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    seconds: float

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    @property
    def result(self) -> dict[str, Any]:
        results = self.of_type("result")
        assert results, f"no result line; stderr: {self.stderr[-2000:]}"
        return results[-1]


def run_claude(cli: str, server: ScriptedServer, tmp_path: Path, timeout: float = 60) -> Run:
    """One headless turn, isolated from the real home and config, killed whole on timeout."""
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"),
        "IS_SANDBOX": "1",
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "2",
    }
    command = [
        cli, "-p", "do the thing", "--model", MODEL,
        "--output-format", "stream-json", "--verbose", "--include-hook-events",
        "--dangerously-skip-permissions", "--no-session-persistence",
        "--setting-sources", "project",
    ]  # fmt: skip
    began = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"the CLI did not finish within {timeout} s")
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return Run(process.returncode, events, stderr, time.monotonic() - began)


def test_a_write_and_bash_script_completes_and_writes_files(
    claude_cli: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    script = Script(
        steps=[
            Step(
                blocks=[
                    TextBlock(text="Writing the note."),
                    ToolUseBlock(
                        name="Write",
                        input={"file_path": str(out / "sub" / "note.md"), "content": "hello\n"},
                    ),
                ]
            ),
            Step(
                blocks=[
                    ToolUseBlock(name="Bash", input={"command": f"echo one > {out}/one.txt"}),
                    ToolUseBlock(name="Bash", input={"command": f"echo two > {out}/two.txt"}),
                ]
            ),
        ],
        final_text="All written.",
    )
    with ScriptedServer(script) as server:
        run = run_claude(claude_cli, server, tmp_path)

    assert (out / "sub" / "note.md").read_text() == "hello\n"
    assert (out / "one.txt").read_text() == "one\n"
    assert (out / "two.txt").read_text() == "two\n"

    init = [e for e in run.of_type("system") if e.get("subtype") == "init"]
    assert len(init) == 1 and init[0]["model"] == MODEL
    uses = [
        block
        for event in run.of_type("assistant")
        for block in event["message"]["content"]
        if block["type"] == "tool_use"
    ]
    results = [
        block
        for event in run.of_type("user")
        for block in event["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert [u["name"] for u in uses] == ["Write", "Bash", "Bash"]
    assert {r["tool_use_id"] for r in results} == {u["id"] for u in uses}
    assert not any(r.get("is_error") for r in results)

    result = run.result
    assert run.returncode == 0, run.stderr
    assert result["is_error"] is False and result["terminal_reason"] == "completed"
    assert result["result"] == "All written."
    assert [r.step for r in server.requests] == [0, 1, 2]
    assert not any(r.side for r in server.requests)


def test_a_persistent_500_ends_in_an_error_result(claude_cli: str, tmp_path: Path) -> None:
    script = Script(steps=[Step(blocks=[TextBlock(text="never seen")])])
    with ScriptedServer(script, fault="500") as server:
        run = run_claude(claude_cli, server, tmp_path, timeout=30)

    result = run.result
    assert run.returncode == 1
    assert result["is_error"] is True
    assert result["terminal_reason"] == "api_error" and result["api_error_status"] == 500
    assert [r.status for r in server.requests] == [500] * 3, "one try and two retries"
    assert run.seconds < 15

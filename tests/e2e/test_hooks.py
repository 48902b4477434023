"""The shipped plugins' hooks start from a folder whose path holds a space, through the real
CLI; a required hook that cannot start is an ERROR that names its exit code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.models import Script
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.scoring.transcript import parse_lines
from tests.e2e.conftest import REPO_ROOT

pytestmark = pytest.mark.e2e

PLUGINS = [
    REPO_ROOT / "fixtures" / "plugins" / "os-vault",
    REPO_ROOT / "suites" / "adr-discrimination" / "fixtures" / "plugins" / "os-adr",
]


def session_start(cli: str, plugin: Path, base: Path) -> list[dict[str, object]]:
    project = base / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with ScriptedServer(Script(final_text="Done.")) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(base / "home"),
            "CLAUDE_CONFIG_DIR": str(base / "cfg"),
            "IS_SANDBOX": "1",
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "evalkit-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "OS_VAULT_PATH": str(base / "vault"),
            "OS_VAULT_SKIP_REBUILD": "1",
        }
        command = [
            cli, "-p", "hello", "--model", "evalkit-probe", "--output-format", "stream-json",
            "--verbose", "--include-hook-events", "--dangerously-skip-permissions",
            "--no-session-persistence", "--setting-sources", "", "--plugin-dir", str(plugin),
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=120
        )
    events = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    return [e for e in events if e.get("subtype") == "hook_response"]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_a_shipped_session_start_hook_runs_from_a_path_with_a_space(
    claude_cli: str, tmp_path: Path, plugin: Path
) -> None:
    base = tmp_path / "with space"
    copy = base / "plugins" / plugin.name
    shutil.copytree(plugin, copy)
    (base / "vault").mkdir(parents=True)
    hooks = [h for h in session_start(claude_cli, copy, base) if h["hook_event"] == "SessionStart"]
    assert hooks, "no SessionStart hook_response"
    assert all(h["exit_code"] == 0 and h["outcome"] == "success" for h in hooks), hooks


def test_a_hook_that_cannot_start_is_an_error_with_its_exit_code(
    claude_cli: str, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGINS[0], plugin)
    (plugin / "hooks" / "session-start.sh").unlink()
    hooks = session_start(claude_cli, plugin, tmp_path / "run")
    failed = [h for h in hooks if h["hook_event"] == "SessionStart"]
    assert failed and failed[0]["exit_code"] not in (0, None), failed
    from evalkit.models import RequiredHook
    from evalkit.scoring.validity import failed_hooks

    transcript = parse_lines([json.dumps(h) for h in hooks])
    reasons = failed_hooks(transcript, [RequiredHook(event="SessionStart", output_contains="x")])
    assert reasons == [f"hook-failed:SessionStart:{failed[0]['exit_code']}"]

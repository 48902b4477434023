"""No text from a folder above the sandbox reaches the model.

The pinned CLI is run from below a folder holding one candidate file at a time, against the
scripted server, which keeps every request body. Every candidate whose text reached the model
must be one evalkit refuses to run under, and a real `evalkit run` under such a folder leaves
nothing planned.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.models import Script
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.run.sandbox import GUARDED_ANCESTOR_FILES, contamination_above
from tests.e2e.conftest import Kit

pytestmark = pytest.mark.e2e

CANDIDATES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    ".claude/CLAUDE.local.md",
    ".claude/rules/style.md",
    "AGENTS.md",
    "GEMINI.md",
    ".claude/settings.json",
    ".claude/agents/helper.md",
    ".claude/commands/go.md",
)


def marker(candidate: str) -> str:
    return "ancestor-marker-" + "".join(c for c in candidate if c.isalnum())


def reached_the_model(cli: str, base: Path, candidate: str) -> bool:
    """Run the CLI in a git project below a folder holding `candidate`; did its text arrive?"""
    top = base / "top"
    path = top / candidate
    path.parent.mkdir(parents=True, exist_ok=True)
    if candidate.endswith(".json"):
        path.write_text('{"env": {"X": "' + marker(candidate) + '"}}\n')
    else:
        path.write_text(f"# Notes\n\nAlways mention {marker(candidate)}.\n")
    project = top / "below" / "project"
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
            "CLAUDE_CODE_MAX_RETRIES": "1",
        }
        command = [
            cli, "-p", "hello", "--model", "evalkit-probe", "--output-format", "stream-json",
            "--verbose", "--dangerously-skip-permissions", "--no-session-persistence",
            "--setting-sources", "project",
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.bodies, "the CLI sent no request"
        return any(marker(candidate) in body for body in server.bodies)


def test_every_ancestor_file_the_cli_sends_to_the_model_is_refused(
    claude_cli: str, tmp_path: Path
) -> None:
    reached = {
        c for n, c in enumerate(CANDIDATES) if reached_the_model(claude_cli, tmp_path / str(n), c)
    }
    assert "CLAUDE.md" in reached, "the probe is broken: not even CLAUDE.md reached the model"
    for n, candidate in enumerate(CANDIDATES):
        below = tmp_path / str(n) / "top" / "below"
        found = contamination_above(below)
        if candidate in reached:
            assert found is not None, f"{candidate} reaches the model but is not refused"
    assert reached <= set(GUARDED_ANCESTOR_FILES) | {".claude/rules/style.md"}, reached


def test_a_run_under_an_agents_md_is_refused_before_anything_is_planned(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    kit = new_kit(tmp_path)
    (kit.scratch / "AGENTS.md").write_text("Always write a note.\n")
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work))
    assert done.returncode == 2, done.why()
    assert "AGENTS.md" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (work / "plans.jsonl").exists()

"""Shared fixtures for tests that drive the real Claude Code CLI."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PINNED_CLI = REPO_ROOT / ".tools" / "claude" / "node_modules" / ".bin" / "claude"


def _find_claude() -> tuple[str | None, str]:
    """The CLI to drive, and where it came from (or why none was found)."""
    configured = os.environ.get("EVALKIT_CLAUDE")
    if configured:
        found = shutil.which(configured)
        if found is None:
            pytest.fail(f"EVALKIT_CLAUDE={configured!r} is not an executable")
        return found, "EVALKIT_CLAUDE"
    if os.access(PINNED_CLI, os.X_OK):
        return str(PINNED_CLI), "the pinned install in .tools/claude"
    on_path = shutil.which("claude")
    if on_path is not None:
        return on_path, "PATH"
    return None, (
        f"no Claude Code CLI: EVALKIT_CLAUDE is unset, {PINNED_CLI} does not exist "
        "(install it with the Makefile's npm command) and `claude` is not on PATH"
    )


@pytest.fixture(scope="session")
def claude_cli() -> str:
    """Path of the Claude Code executable; skips when absent, but fails under CI=true."""
    path, where = _find_claude()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(where)
        print(f"skipping e2e: {where}")
        pytest.skip(where)
    return path

"""Finding the Claude Code CLI: EVALKIT_CLAUDE, then the project-local copy, then PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from evalkit.errors import PrerequisiteError
from evalkit.pins import pinned

PINNED_VERSION = pinned("claude")
CHECKOUT = Path(__file__).resolve().parents[3]
LOCAL_COPY = CHECKOUT / ".tools" / "claude" / "node_modules" / ".bin"
NPM = (
    f"`npm install -g @anthropic-ai/claude-code@{PINNED_VERSION}` (or "
    f"`npm install --prefix DIR @anthropic-ai/claude-code@{PINNED_VERSION}` and "
    "EVALKIT_CLAUDE=DIR/node_modules/.bin/claude)"
)


def install_hint(checkout: Path = CHECKOUT) -> str:
    """How to get the pinned CLI: `make setup` exists only in a checkout of evalkit itself;
    an installed evalkit points at npm."""
    if (checkout / "Makefile").is_file() and (checkout / "evalkit").is_dir():
        return (
            f"run `make setup` (installs @anthropic-ai/claude-code@{PINNED_VERSION} into "
            f".tools/), or {NPM}, or set EVALKIT_CLAUDE to it"
        )
    return f"install it with {NPM}, or set EVALKIT_CLAUDE to it"


HOW = install_hint()


def find_cli() -> Path:
    explicit = os.environ.get("EVALKIT_CLAUDE")
    if explicit:
        path = Path(explicit).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
        raise PrerequisiteError(f"EVALKIT_CLAUDE={explicit} is not an executable file; {HOW}")
    local = LOCAL_COPY / "claude"
    if local.is_file() and os.access(local, os.X_OK):
        return local
    found = shutil.which("claude")
    if found:
        return Path(found)
    raise PrerequisiteError(f"the Claude Code CLI was not found; {HOW}")


def cli_version(cli: Path) -> str:
    try:
        done = subprocess.run([str(cli), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().split(" ")[0] if done.returncode == 0 else ""

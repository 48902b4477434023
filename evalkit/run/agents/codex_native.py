"""Codex's native program, started by evalkit as Codex's npm launcher starts it.

The `codex` command npm installs is a Node script (`bin/codex.js`) that only finds the
vendored native binary for this machine and replaces itself with it (`execve`, the same
arguments after the binary's own path, and two variables of its own). That binary is the
process that writes Codex's stream. A sandbox that binds an execute-only copy over each
program can close it either way, but one that cannot bind (srt) can only start the CLI's
first program from its copy: started through the script, the binary would run from its
own readable path, so the agent's processes could read its memory. So a rep starts the
binary itself, with the launcher's arguments and variables (held against 0.171.0's
launcher run by Node in `tests/unit/run/agents/test_codex_native.py`). The process table
then holds the binary alone, as it does when the launcher's Node can `execve` (22.15 and
later); an older Node stays as the binary's parent.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

TRIPLES = {
    ("linux", "x86_64"): ("x86_64-unknown-linux-musl", "codex-linux-x64"),
    ("linux", "aarch64"): ("aarch64-unknown-linux-musl", "codex-linux-arm64"),
    ("darwin", "x86_64"): ("x86_64-apple-darwin", "codex-darwin-x64"),
    ("darwin", "arm64"): ("aarch64-apple-darwin", "codex-darwin-arm64"),
}
"""Per (platform, machine): the target its launcher picks, and the npm package holding it."""
LAUNCHER = Path("bin") / "codex.js"


def native_program(cli: Path) -> Path:
    """The vendored binary Codex's npm launcher at `cli` would start here, or `cli` itself
    when it is no such launcher or the binary is not where the launcher looks."""
    real = cli.resolve()
    root = real.parent.parent
    if real != (root / LAUNCHER).resolve() or real.name != LAUNCHER.name:
        return cli
    found = TRIPLES.get((sys.platform, platform.machine()))
    if found is None:
        return cli
    triple, package = found
    # where Node's resolution from the launcher finds the platform package, nearest first,
    # then the launcher's own fallback folder
    for vendor in (root / "node_modules" / "@openai" / package / "vendor",
                   root.parent / package / "vendor", root / "vendor"):  # fmt: skip
        binary = vendor / triple / "bin" / "codex"
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    return cli


def launcher_env(program: Path) -> dict[str, str]:
    """The variables Codex's npm launcher hands the binary at `program` (an npm install's):
    none for a program that is no vendored binary of a launcher's package."""
    real = program.resolve()
    for folder in real.parents:
        for root in (folder, folder.parent / "codex"):
            if (root / LAUNCHER).is_file() and native_program(root / LAUNCHER).resolve() == real:
                return {"CODEX_MANAGED_PACKAGE_ROOT": str(root.resolve()),
                        "CODEX_MANAGED_BY_NPM": "1"}  # fmt: skip
    return {}

"""A Codex rep starts the vendored binary itself, exactly as Codex's own npm launcher starts
it: the same program, the same arguments and the same variables of the launcher's, read off a
stand-in binary that the real, installed `codex.js` run by Node starts."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.run.agents.clis import find_agent_cli
from evalkit.run.agents.codex_native import TRIPLES, launcher_env, native_program
from evalkit.run.backends import srt

SHOW = '#!/bin/sh\nprintf "%s\\n" "$0" "$@"\nenv | grep "^CODEX_MANAGED" | sort\n'


def _installed_launcher() -> Path:
    try:
        return find_agent_cli("codex").resolve()
    except Exception as missing:  # noqa: BLE001
        pytest.skip(f"no Codex CLI: {missing}")


def _stand_in(tmp_path: Path, launcher: Path) -> Path:
    """The installed launcher and package files, with a binary that prints what it got."""
    import platform
    import sys

    triple, package = TRIPLES[(sys.platform, platform.machine())]
    ours = tmp_path / "node_modules" / "@openai"
    (ours / "codex" / "bin").mkdir(parents=True)
    shutil.copy2(launcher, ours / "codex" / "bin" / "codex.js")
    shutil.copy2(launcher.parent.parent / "package.json", ours / "codex" / "package.json")
    binary = ours / package / "vendor" / triple / "bin" / "codex"
    binary.parent.mkdir(parents=True)
    shutil.copy2(launcher.parent.parent.parent / package / "package.json",
                 ours / package / "package.json")  # fmt: skip
    binary.write_text(SHOW)
    binary.chmod(0o755)
    return ours / "codex" / "bin" / "codex.js"


def test_the_rep_starts_what_codexs_own_launcher_starts(tmp_path: Path) -> None:
    node = srt.node() or shutil.which("node")
    if node is None:
        pytest.skip("no Node to run Codex's launcher")
    launcher = _stand_in(tmp_path, _installed_launcher())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("npm_", "CODEX_"))}
    said = subprocess.run([node, str(launcher), "exec", "--json"], capture_output=True,
                          text=True, env=env, timeout=60, check=True)  # fmt: skip
    lines = said.stdout.splitlines()
    program = native_program(launcher)
    assert program != launcher
    assert lines[:3] == [str(program), "exec", "--json"]
    assert dict(line.split("=", 1) for line in lines[3:]) == launcher_env(program)


def test_a_cli_that_is_no_codex_launcher_is_started_as_it_is(tmp_path: Path) -> None:
    other = tmp_path / "codex"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    assert native_program(other) == other and launcher_env(other) == {}

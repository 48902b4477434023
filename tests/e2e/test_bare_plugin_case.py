"""A case the pinned CLI's own `claude plugin eval init --bare` writes, untouched, is what
`evalkit init`'s Tasks are: self-test proves it, and a real model and `freeze` are refused in
one line until its Task is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

EVALKIT = Path(sys.executable).parent / "evalkit"


def _bare_plugin(claude_cli: str, root: Path, env: dict[str, str]) -> Path:
    plugin = root / "greeter"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "greeter"}\n')
    made = subprocess.run(
        [claude_cli, "plugin", "eval", "init", "--bare", "first-case"], cwd=plugin, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.returncode
    assert (plugin / "evals" / "first-case" / "prompt.md").is_file()
    return plugin


def test_an_untouched_bare_case_self_tests_and_is_refused_for_a_real_model(
    claude_cli: str, tmp_path: Path
) -> None:
    (tmp_path / "home").mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "k"}
    plugin = _bare_plugin(claude_cli, tmp_path, env)

    def evalkit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(EVALKIT), "--suite", str(plugin), *args], env=env, cwd=tmp_path,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    proved = evalkit("self-test")
    assert proved.returncode == 0 and "cells as designed" in proved.stdout, proved.returncode
    for args in (("run", "first-case", "sonnet", str(tmp_path / "w"), "--allow-unfrozen"),
                 ("suite", "freeze")):  # fmt: skip
        refused = evalkit(*args)
        said = refused.stderr.strip().splitlines()
        assert refused.returncode == 2 and len(said) == 1, args
        assert "placeholder" in said[0] and "internal error" not in said[0], args
    assert not (tmp_path / "w").exists()

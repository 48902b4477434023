"""bench/vs_plugin_eval.py on one case: both tools agree on every reference policy, and a
server fault is an ERROR row in evalkit where `claude plugin eval` scores the case 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def test_one_case_agrees_and_a_500_is_an_error_only_in_evalkit(
    claude_cli: str, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "vs_plugin_eval.py"), "--cases", "1",
         "--faults", "500"],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    fault = next((line for line in lines if line.strip().startswith("500")), "")
    assert done.returncode == 0, done.stderr[-2000:]
    assert any(line.strip() == "agreement: 3/3" for line in lines), done.stdout
    assert "claude plugin eval: FAIL (score 0) (partial: false" in fault, fault
    assert "evalkit: ERROR" in fault, fault
    leaked = "ships today" in done.stdout + done.stderr  # the bench case's own prompt
    assert not leaked

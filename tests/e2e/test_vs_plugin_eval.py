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


def graders_table(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "vs_plugin_eval.py"), "--graders", *args],
        env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    return done.returncode, done.stdout.splitlines()


def test_calls_sent_at_once_agree_with_the_runner(claude_cli: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from plugin_grader_cases import QUICK

    code, lines = graders_table(tmp_path, "--only", ",".join(QUICK), "--ablation", "none")
    differ = [line.split()[0] for line in lines if line.endswith("DIFFER")]
    assert differ == [] and code == 0
    assert f"agreement: {len(QUICK)}/{len(QUICK)}" in lines


@pytest.mark.slow
def test_every_grader_case_agrees_with_the_runner_in_both_ablation_modes(
    claude_cli: str, tmp_path: Path
) -> None:
    code, lines = graders_table(tmp_path)
    differ = [" ".join(line.split()[:3]) for line in lines if line.endswith("DIFFER")]
    assert differ == [] and code == 0
    assert any(line.startswith("agreement: ") for line in lines)

"""Calibration through the real CLI: every policy and fault mode over both sets of both suites."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EVALKIT = Path(sys.executable).parent / "evalkit"
# The two ladder suites are whole-suite calibrations (`make calibrate-suites`); runs-tests, the
# smallest, covers every generic policy and fault mode in `make test`.
SUITES = [
    pytest.param(REPO, id="vault-write", marks=pytest.mark.slow),
    pytest.param(REPO / "suites" / "adr-discrimination", id="adr-discrimination",
                 marks=pytest.mark.slow),
    pytest.param(REPO / "suites" / "runs-tests", id="runs-tests"),
]


def world(tmp: Path) -> dict[str, str]:
    for name in ("home", "scratch", "real-vault"):
        (tmp / name).mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EVALKIT_", "ANTHROPIC_", "CLAUDE_", "OS_VAULT_"))
    }
    env.update(
        HOME=str(tmp / "home"),
        EVALKIT_SCRATCH=str(tmp / "scratch"),
        EVALKIT_REAL_VAULT=str(tmp / "real-vault"),
        COLUMNS="200",
    )
    return env


def evalkit(env: dict[str, str], suite: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVALKIT), "--suite", str(suite), *args],
        env=env,
        cwd=env["HOME"],
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.e2e
@pytest.mark.parametrize("suite", SUITES)
def test_calibrate_all_then_verify_and_report(claude_cli: str, tmp_path: Path, suite: Path) -> None:
    env = world(tmp_path)
    work = tmp_path / "work"
    done = evalkit(env, suite, "calibrate", "--set", "all", "--jobs", "4", str(work))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "cells as expected" in done.stdout

    verified = evalkit(env, suite, "verify", str(work))
    assert verified.returncode == 0, verified.stdout[-4000:]
    assert "re-derived from the kept evidence." in verified.stdout
    [line] = [x for x in verified.stdout.splitlines() if x.startswith("CALIBRATION: ")]
    matched, total = line.split()[1].split("/")
    assert matched == total, verified.stdout[-4000:]
    assert ("PUBLISHABLE" in verified.stdout) is False

    report = evalkit(env, suite, "report", str(work), "--format", "json")
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    oracle = [m for m in data["models"] if m["model"] == "policy:oracle"]
    assert oracle and all(
        m["recall"]["rate"] == 1.0 and m["specificity"]["rate"] == 1.0 for m in oracle
    )
    hang = [m for m in data["models"] if m["model"] == "policy:fault-hang"]
    assert hang and all(m["recall"]["errors"] == m["recall"]["n"] for m in hang)

    assert not any((tmp_path / "home").iterdir()), "a run wrote into HOME"
    assert list((tmp_path / "scratch").iterdir()) == [], "scratch left behind"

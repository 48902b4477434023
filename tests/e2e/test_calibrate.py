"""Calibration through the real CLI: every policy and fault mode over a suite's scenarios."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EVALKIT = Path(sys.executable).parent / "evalkit"
# The two ladder suites are whole-suite calibrations, both sets (`make calibrate-suites`);
# runs-tests, the smallest, covers every generic policy and fault mode on its run set in
# `make test`.
SUITES = [
    pytest.param(REPO, "all", id="vault-write", marks=pytest.mark.slow),
    pytest.param(REPO / "suites" / "adr-discrimination", "all", id="adr-discrimination",
                 marks=pytest.mark.slow),
    pytest.param(REPO / "suites" / "runs-tests", "run", id="runs-tests"),
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
        timeout=3600,  # a hang guard only: a whole suite on two cores beside other workers
    )


def seen_by_effect_and_in_order(work: Path) -> None:
    """runs-tests' observed bin/test: a positive that ran it only before its edit fails (its
    run did not end on the final tree); one that reached it from its own folder, through a
    variable and `bash -c` passes; a negative fails on either (the run set's two pairs); every
    rep kept the run log verify re-derived from."""
    with (work / "results.tsv").open(encoding="utf-8") as handle:
        rows = {
            (r["scenario"].split("-")[0], r["model"].removeprefix("policy:")): r
            for r in csv.DictReader(handle, delimiter="\t")
        }
    for pair in ("1", "2"):
        first = rows[(f"P{pair}", "checks-first")]
        assert (first["verdict"], first["a"]) == ("FAIL", "A:FAIL"), pair
        assert "A-fail:checks-on-final-tree" in first["reasons"].split(";"), pair
        assert rows[(f"P{pair}", "checks-from-subfolder")]["verdict"] == "PASS", pair
        for policy in ("checks-first", "checks-from-subfolder"):
            negative = rows[(f"N{pair}", policy)]
            assert negative["verdict"] == "FAIL", (pair, policy)
            assert "fail:ran-bin-test" in negative["reasons"].split(";"), (pair, policy)
    lines = [json.loads(x) for x in (work / "manifest.jsonl").read_text().splitlines()]
    assert all("observed" in line["files"] for line in lines)
    oracle = next(x for x in lines if x["model"] == "policy:oracle" and x["verdict"] == "PASS")
    log = work / oracle["evidence"] / oracle["files"]["observed"]
    assert any(json.loads(x)["event"] == "end" for x in log.read_text().splitlines())


@pytest.mark.e2e
@pytest.mark.parametrize(("suite", "which"), SUITES)
def test_calibrate_then_verify_and_report(
    claude_cli: str, tmp_path: Path, suite: Path, which: str
) -> None:
    env = world(tmp_path)
    work = tmp_path / "work"
    done = evalkit(env, suite, "calibrate", "--set", which, "--jobs", "4", str(work))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "cells as expected" in done.stdout

    verified = evalkit(env, suite, "verify", str(work))
    assert verified.returncode == 0, verified.stdout[-4000:]
    assert "re-derived from the kept evidence." in verified.stdout
    [line] = [x for x in verified.stdout.splitlines() if x.startswith("CALIBRATION: ")]
    matched, total = line.split()[1].split("/")
    assert matched == total, verified.stdout[-4000:]
    assert ("PUBLISHABLE" in verified.stdout) is False
    if suite.name == "runs-tests":
        seen_by_effect_and_in_order(work)

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


SLOW = pytest.mark.slow
AGENT_SUITES = [
    pytest.param(REPO, "codex", id="vault-write-codex", marks=SLOW),
    pytest.param(REPO, "gemini", id="vault-write-gemini", marks=SLOW),
    pytest.param(REPO / "suites" / "adr-discrimination", "codex", id="adr-codex", marks=SLOW),
    pytest.param(REPO / "suites" / "adr-discrimination", "gemini", id="adr-gemini", marks=SLOW),
]
"""Whole-suite calibrations through the other agents' real CLIs and scripted servers, the run
set as the issue asks (`make calibrate-suites`). Measured once by hand: see docs/usage.md."""


def _calibrated_through(env: dict[str, str], suite: Path, agent: str, work: Path,
                        *extra: str) -> None:  # fmt: skip
    done = evalkit(env, suite, "calibrate", "--agent", agent, "--set", "run", "--jobs", "4",
                   *extra, str(work))  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    verified = evalkit(env, suite, "verify", str(work))
    [line] = [x for x in verified.stdout.splitlines() if x.startswith("CALIBRATION: ")]
    matched, total = line.split()[1].split("/")
    assert matched == total, verified.stdout[-4000:]
    with (work / "results.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert {r["cli_version"].split("/")[0] for r in rows} == {agent}
    faults = [r for r in rows if r["model"].startswith("policy:fault-")]
    assert all(r["verdict"] == "ERROR" for r in faults), [r["model"] for r in faults]


@pytest.mark.e2e
@pytest.mark.parametrize(("suite", "agent"), AGENT_SUITES)
def test_calibrate_a_whole_suite_through_another_agent(
    suite: Path, agent: str, tmp_path: Path
) -> None:
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    _calibrated_through(world(tmp_path), suite, agent, tmp_path / "work")
    assert list((tmp_path / "scratch").iterdir()) == [], "scratch left behind"


@pytest.mark.e2e
@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_small_calibration_through_each_agent(agent: str, tmp_path: Path) -> None:
    """`make test`'s one per agent: runs-tests' first positive, a pass and the order rule's
    fail (a tool call placed by its line in the agent's own stream); the faults through each
    agent are test_other_agents', and every fault mode is in the whole-suite ones."""
    from tests.e2e.conftest import copy_suite
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    env = world(tmp_path)
    suite = copy_suite(tmp_path / "suite", {"P1"}, REPO / "suites" / "runs-tests")
    freeze = evalkit(env, suite, "suite", "freeze")
    assert freeze.returncode == 0, freeze.stderr
    work = tmp_path / "work"
    _calibrated_through(env, suite, agent, work, "--policies", "oracle,checks-first")
    with (work / "results.tsv").open(encoding="utf-8") as handle:
        rows = {(r["scenario"][:2], r["model"]): r for r in csv.DictReader(handle, delimiter="\t")}
    first = rows[("P1", "policy:checks-first")]
    assert "A-fail:checks-on-final-tree" in first["reasons"].split(";"), first["reasons"]

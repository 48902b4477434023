"""`make demo`'s three commands, on a small calibration: a newcomer's first run ends in the
calibration's result, not in red over the ERROR rows the fault policies make by design."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import Kit, read_jsonl

POLICIES = "oracle,fault-500,flaky-oracle"


@pytest.mark.e2e
def test_calibrate_then_verify_then_report_ends_in_the_calibration(
    new_kit: Callable[..., Kit], suite_copier: Callable[..., Path], tmp_path: Path
) -> None:
    suite = suite_copier(tmp_path / "suite", only={"P1", "N1"})
    kit = new_kit(tmp_path / "kit", suite=suite)
    work = kit.base / "results" / "demo"
    done = kit.run("calibrate", "--set", "run", "--policies", POLICIES, str(work), timeout=600)
    assert done.returncode == 0, done.why()

    [plan] = read_jsonl(work / "plans.jsonl")
    assert plan["calibration"] is True
    expected = {
        (x["scenario"], x["model"]): (x["verdict"], x["attempt"]) for x in plan["expected_verdicts"]
    }
    assert expected[("N1-L1-reporting", "policy:fault-500")] == ("ERROR", 1)
    assert expected[("P1-L1-reporting", "policy:flaky-oracle")] == ("PASS", 2)
    assert len(expected) == 6

    verified = kit.run("verify", str(work), timeout=300)
    assert verified.returncode == 0, verified.why()
    assert "CALIBRATION: 6/6 cells as expected" in verified.stdout.splitlines()

    page = work / "report.html"
    report = kit.run("report", str(work), "--html", str(page), timeout=300)
    assert report.returncode == 0, report.why()
    lines = report.stdout.splitlines()
    assert lines[0] == "CALIBRATION: 6/6 cells as expected", report.why()
    assert "expected ERROR policy:fault-500 2 row(s): P1-L1-reporting, N1-L1-reporting" in lines
    assert ("PUBLISHABLE" in report.stdout + verified.stdout) is False
    data = json.loads(kit.run("report", str(work), "--format", "json").stdout)
    assert data["calibration"]["as_expected"] == data["calibration"]["total"] == 6
    assert page.is_file()

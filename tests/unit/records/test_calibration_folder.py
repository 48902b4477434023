"""A folder `calibrate` wrote is read as a calibration, not a measurement: its report and
verify lead with how many cells came out as expected, its fault rows are expected ERRORs, and
neither speaks of publishing. Anything else in the folder makes it a measurement again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.errors import RefusedError
from evalkit.models import PlanCell, ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.merge import merge
from evalkit.records.report.build import build_report
from evalkit.records.report.text import to_markdown
from evalkit.records.verify.record import verify_and_record
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from tests.conftest import REPO
from tests.unit.records.folder import CALIBRATION, calibration_folder, context, record_rep

pytestmark = pytest.mark.heavy

P1, N1 = "P1-L1-reporting", "N1-L1-reporting"
ORACLE, CUT = "policy:oracle", "policy:fault-cut"
EXPECTED = [{"scenario": s, "model": m, "verdict": v} for s, m, v, _ in CALIBRATION]


@pytest.fixture(scope="module")
def calibrated(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("calibrated") / "work"
    calibration_folder(suite, work)
    return work


@pytest.fixture
def work(calibrated: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(calibrated, tmp_path / "work", symlinks=True))


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--suite", str(REPO), *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout


def _expect(work: Path, scenario: str, model: str, verdict: str) -> None:
    """Edit the plan's expected verdict of one cell, as a calibration that came out otherwise."""
    path = work / "plans.jsonl"
    plan = json.loads(path.read_text(encoding="utf-8"))
    for cell in plan["expected_verdicts"]:
        if (cell["scenario"], cell["model"]) == (scenario, model):
            cell["verdict"] = verdict
    path.write_text(json.dumps(plan) + "\n", encoding="utf-8")


def test_a_calibration_plan_keeps_the_flag_and_every_cell_s_expected_verdict(
    calibrated: Path,
) -> None:
    plan = json.loads((calibrated / "plans.jsonl").read_text(encoding="utf-8"))
    assert plan["calibration"] is True
    assert [(x["scenario"], x["model"], x["verdict"]) for x in plan["expected_verdicts"]] == [
        (x["scenario"], x["model"], x["verdict"]) for x in EXPECTED
    ]


def test_verify_exits_0_and_says_every_cell_came_out_as_expected(work: Path) -> None:
    code, out = _cli("verify", str(work))
    assert code == 0, out
    assert "CALIBRATION: 3/3 cells as expected" in out
    assert ("PUBLISHABLE" in out) is False


def test_the_report_leads_with_the_calibration_and_lists_fault_rows_as_expected_errors(
    suite: Suite, work: Path
) -> None:
    verify_and_record(suite, work)
    code, out = _cli("report", str(work))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "CALIBRATION: 3/3 cells as expected"
    assert any(line.split() == ["expected", "ERROR", CUT, "1", "row(s):", P1] for line in lines), (
        out
    )
    assert ("PUBLISHABLE" in out) is False


def test_the_json_and_markdown_forms_carry_the_same(suite: Suite, work: Path) -> None:
    verify_and_record(suite, work)
    built = build_report(suite, work)
    assert built.calibration is not None
    assert (built.calibration.as_expected, built.calibration.total) == (3, 3)
    assert built.publishability.verdict == "CALIBRATION: 3/3 cells as expected"
    assert ("PUBLISHABLE" in built.model_dump_json()) is False
    markdown = to_markdown(built)
    assert "**CALIBRATION: 3/3 cells as expected**" in markdown.splitlines()[:3]
    assert f"- expected ERROR {CUT} 1 row(s): {P1}" in markdown.splitlines()
    assert ("PUBLISHABLE" in markdown) is False


def test_a_cell_that_differs_is_named_and_verify_exits_non_zero(suite: Suite, work: Path) -> None:
    _expect(work, N1, ORACLE, "FAIL")
    code, out = _cli("verify", str(work))
    assert code == 1, out
    assert "CALIBRATION: 2/3 cells as expected" in out
    assert f"{N1} oracle: expected FAIL, got PASS" in out
    code, out = _cli("report", str(work))
    assert out.splitlines()[0] == "CALIBRATION: 2/3 cells as expected"
    assert f"  {N1} oracle: expected FAIL, got PASS" in out.splitlines()


def test_a_cell_expected_at_a_later_attempt_differs_when_the_first_counted(
    suite: Suite, work: Path
) -> None:
    path = work / "plans.jsonl"
    plan = json.loads(path.read_text(encoding="utf-8"))
    plan["expected_verdicts"][0]["attempt"] = 2
    path.write_text(json.dumps(plan) + "\n", encoding="utf-8")
    built = build_report(suite, work)
    assert built.calibration is not None
    assert built.calibration.differ == [
        f"{P1} oracle: expected PASS at attempt 2, got PASS at attempt 1"
    ]


def test_a_row_of_a_real_model_makes_it_a_measurement_folder(suite: Suite, work: Path) -> None:
    row = ResultRow(
        scenario=N1, model="claude-haiku", a="A:PASS", b="B:n/a", verdict="PASS", reasons="-",
        run_id="c1", rep=1,
    )  # fmt: skip
    append_row(work / "results.tsv", row)
    built = build_report(suite, work)
    assert built.calibration is None
    assert built.publishability.verdict.startswith("NOT PUBLISHABLE")


def test_another_plan_makes_it_a_measurement_folder(suite: Suite, work: Path) -> None:
    ctx = context(suite, work, "r2")
    record_plan(ctx, [PlanCell(scenario=P1, model=ORACLE, reps=1)], "grid --reps 1")
    record_rep(ctx, P1, ORACLE, 1)
    built = build_report(suite, work)
    assert built.calibration is None
    code, out = _cli("verify", str(work))
    assert "NOT PUBLISHABLE" in out and "1 ERROR row(s)" in out


def test_a_plan_without_every_cell_s_expected_verdict_is_a_measurement(
    suite: Suite, work: Path
) -> None:
    path = work / "plans.jsonl"
    plan = json.loads(path.read_text(encoding="utf-8"))
    plan["expected_verdicts"] = plan["expected_verdicts"][:2]
    path.write_text(json.dumps(plan) + "\n", encoding="utf-8")
    assert build_report(suite, work).calibration is None


def test_merging_a_calibration_folder_into_a_measurement_folder_is_refused(
    work: Path, recorded: Path, tmp_path: Path
) -> None:
    target = Path(shutil.copytree(recorded, tmp_path / "target", symlinks=True))
    before = (target / "plans.jsonl").read_bytes()
    with pytest.raises(RefusedError, match="calibration folder"):
        merge(target, [work])
    assert (target / "plans.jsonl").read_bytes() == before

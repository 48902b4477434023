"""`make demo` ends on two lines: the calibration's own verdict, then the page to open with
the command that puts `evalkit` on PATH; a cell that came out otherwise makes it exit 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli.demo_end import ON_PATH, final_lines, main
from evalkit.records.report.build import build_report
from evalkit.records.verify.record import verify_and_record
from evalkit.suite.config import Suite
from tests.unit.records.folder import CALIBRATION, calibration_folder

pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def recorded(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three calibration cells of tests/unit/records/folder.py, recorded once."""
    work = tmp_path_factory.mktemp("calibrated") / "demo"
    calibration_folder(suite, work)
    return work


@pytest.fixture
def work(recorded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(recorded, tmp_path / "demo", symlinks=True))


def test_a_calibration_as_expected_ends_on_its_verdict_and_the_page(
    suite: Suite, work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    verify_and_record(suite, work)
    monkeypatch.setenv("EVALKIT_SUITE", str(suite.root))
    page = work / "report.html"
    assert main([str(work), str(page)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"CALIBRATION: {len(CALIBRATION)}/{len(CALIBRATION)} cells as expected"
    assert lines[1].startswith("open ") and str(page) in lines[1] and ON_PATH in lines[1]
    assert len(lines) == 2 and page.is_file()


def test_a_cell_that_came_out_otherwise_is_the_verdict_and_fails_the_demo(
    suite: Suite, work: Path
) -> None:
    path = work / "plans.jsonl"
    plan = json.loads(path.read_text(encoding="utf-8"))
    plan["expected_verdicts"][0]["verdict"] = "FAIL"
    path.write_text(json.dumps(plan) + "\n", encoding="utf-8")
    lines, ok = final_lines(build_report(suite, work), "report.html")
    total = len(CALIBRATION)
    assert lines[0].startswith(f"CALIBRATION: {total - 1}/{total} cells as expected") and not ok


def test_a_folder_verify_never_saw_is_not_called_as_expected(suite: Suite, work: Path) -> None:
    lines, ok = final_lines(build_report(suite, work), "report.html")
    assert lines[0].startswith("CALIBRATION: ") and "not verified" in lines[0] and not ok

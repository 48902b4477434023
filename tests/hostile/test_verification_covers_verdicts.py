"""A verification record means what verify found: rows flipped by hand make verify say NOT
PUBLISHABLE, and typing `publishable: true` into its record afterwards makes the record
stale for `report`, and `gate` verifies that side again rather than trusting it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.records.report.build import build_report
from evalkit.records.verify.record import verify_and_record
from evalkit.suite.config import Suite
from tests.unit.records.folder import recorded_folder

pytestmark = pytest.mark.heavy

CELLS = [("P1-L1-reporting", "policy:oracle", 1), ("N1-L1-reporting", "policy:oracle", 1)]


@pytest.fixture(scope="module")
def recorded(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pass of a positive and a negative scenario, recorded without a model."""
    work = tmp_path_factory.mktemp("recorded") / "work"
    recorded_folder(suite, work, CELLS)
    return work


def _flip_every_row(work: Path) -> None:
    lines = (work / "results.tsv").read_text().splitlines(keepends=True)
    flipped = [lines[0]] + [x.replace("\tPASS\t", "\tFAIL\t", 1) for x in lines[1:]]
    assert flipped != lines
    (work / "results.tsv").write_text("".join(flipped))


def _claim_publishable(work: Path) -> None:
    record = json.loads((work / "verified.json").read_text())
    record.update(publishable=True, problems=[], all_rederived=True, failed_trials=0)
    (work / "verified.json").write_text(json.dumps(record))


@pytest.fixture
def tampered(suite: Suite, recorded: Path, tmp_path: Path) -> Path:
    """Rows flipped, verified NOT PUBLISHABLE, then the record edited to say PUBLISHABLE."""
    work = Path(shutil.copytree(recorded, tmp_path / "b", symlinks=True))
    _flip_every_row(work)
    assert not verify_and_record(suite, work).publishable
    _claim_publishable(work)
    return work


def test_a_record_edited_to_publishable_is_stale_for_report(suite: Suite, tampered: Path) -> None:
    got = build_report(suite, tampered).publishability
    assert not got.publishable and got.verification == "stale", got.verdict


def test_gate_verifies_again_a_side_whose_record_was_edited(
    suite: Suite, recorded: Path, tampered: Path, tmp_path: Path
) -> None:
    clean = Path(shutil.copytree(recorded, tmp_path / "a", symlinks=True))
    assert verify_and_record(suite, clean).publishable
    done = CliRunner().invoke(app, ["gate", str(clean), str(tampered), "--format", "json"])
    verdict = json.loads(done.stdout)
    causes = [(c["token"], c["side"]) for c in verdict["causes"]]
    assert done.exit_code == 2 and ("not-publishable", "B") in causes, (done.exit_code, causes)
    assert not json.loads((tampered / "verified.json").read_text())["publishable"]

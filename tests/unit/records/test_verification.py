"""report reads the verdict verify recorded, only while the records it was drawn from are
unchanged, and never shows PUBLISHABLE off a stale or missing record."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
import evalkit.records.verify.rederive as verify_module
from evalkit.cli.main import app
from evalkit.models import ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.build import build_report
from evalkit.records.verify.record import verify_and_record
from evalkit.records.verify.result import VerifyReport
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy


@pytest.fixture
def verified(suite: Suite, recorded: Path, tmp_path: Path) -> Path:
    """A private copy of the recorded folder, verified publishable just now."""
    work = Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))
    assert verify_and_record(suite, work).publishable
    return work


def test_a_fresh_record_is_read_instead_of_re_deriving(
    suite: Suite, verified: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*_: object) -> VerifyReport:
        raise AssertionError("report re-derived the reps")

    monkeypatch.setattr(verify_module, "verify_workdir", never)
    got = build_report(suite, verified).publishability
    assert (got.verdict, got.verification) == ("PUBLISHABLE", "fresh")
    assert got.verified_at == Workdir(verified).read_verification().verified_at  # type: ignore[union-attr]


def test_a_row_appended_by_hand_makes_the_record_stale(suite: Suite, verified: Path) -> None:
    row = ResultRow(
        scenario="N1-L1-reporting", model="policy:oracle", a="A:PASS", b="B:n/a", verdict="PASS",
        reasons="-", run_id="r1", rep=2,
    )  # fmt: skip
    append_row(verified / "results.tsv", row)
    got = build_report(suite, verified).publishability
    assert not got.publishable and got.verification == "stale"
    (problem,) = got.problems
    assert problem.startswith("the verification record is stale (results.tsv changed since")
    assert problem.endswith(f"run `evalkit verify {verified}`")


def test_an_edited_plan_makes_the_record_stale(suite: Suite, verified: Path) -> None:
    plans = verified / "plans.jsonl"
    plan = json.loads(plans.read_text().splitlines()[0])
    plan["cells"][0]["reps"] += 1
    plans.write_text(json.dumps(plan) + "\n")
    got = build_report(suite, verified).publishability
    assert not got.publishable and got.verification == "stale"
    assert "plans.jsonl changed" in got.verdict


def test_an_edited_evidence_file_makes_the_record_stale(suite: Suite, verified: Path) -> None:
    (transcript,) = list((verified / "evidence").rglob("N1-L1-reporting/*/rep-1/transcript.jsonl"))
    transcript.write_text(transcript.read_text() + "\n")
    got = build_report(suite, verified).publishability
    assert not got.publishable and "evidence/ + subjects/ changed" in got.verdict


def test_other_scoring_code_makes_the_record_stale(
    suite: Suite, verified: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "evalkit.records.verify.record.scoring_hash", lambda _suite: "sha256:other"
    )
    got = build_report(suite, verified).publishability
    assert not got.publishable and "scoring code changed" in got.verdict


def test_without_a_record_report_says_verify_has_not_run(suite: Suite, verified: Path) -> None:
    os.remove(verified / "verified.json")
    got = build_report(suite, verified).publishability
    assert not got.publishable and got.verification == "missing"
    assert got.verdict == (
        f"NOT PUBLISHABLE: not verified: run `evalkit verify {verified}` to re-derive every "
        "row from its evidence"
    )


def test_a_record_that_does_not_read_is_not_publishable(suite: Suite, verified: Path) -> None:
    (verified / "verified.json").write_text('{"publishable": true')
    got = build_report(suite, verified).publishability
    assert not got.publishable and got.verification == "unreadable"
    again = f"run `evalkit verify {verified}`"
    assert got.problems == [f"the verification record does not read: {again}"]


def test_a_not_publishable_verdict_is_reported_with_verify_s_reasons(
    suite: Suite, verified: Path
) -> None:
    row = ResultRow(
        scenario="N1-L1-reporting", model="policy:oracle", a="A:PASS", b="B:n/a", verdict="PASS",
        reasons="-",
    )  # fmt: skip
    append_row(verified / "results.tsv", row)
    verify_and_record(suite, verified)
    got = build_report(suite, verified).publishability
    assert got.verification == "fresh" and not got.publishable
    assert "1 row(s) without evidence" in got.problems


def test_verify_refuses_a_folder_of_another_suite_and_writes_nothing(
    suite: Suite, recorded: Path, tmp_path: Path, mini_root: Path
) -> None:
    work = Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))
    done = CliRunner().invoke(app, ["--suite", str(mini_root), "verify", str(work)])
    assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.output
    assert "os-vault-write" in done.stderr and "mini" in done.stderr
    assert not (work / "verified.json").exists()

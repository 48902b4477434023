"""Rows scored by older scoring code: named as such (not as tampering), and re-scored beside."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.models import EvidenceLine, PlanCell, Verdict
from evalkit.records.folder.results import read_results
from evalkit.records.folder.workdir import Workdir
from evalkit.records.kept.evidence import bundle_id
from evalkit.records.report.build import build_report
from evalkit.records.rescore import rescore_workdir, rescored_declarations
from evalkit.records.verify.record import verify_and_record
from evalkit.records.verify.rederive import verify_workdir
from evalkit.run.context import record_plan
from evalkit.scoring.hashing import sha256_file
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from evalkit.suite.subject import build_subject
from tests.conftest import REPO
from tests.unit.records.folder import context, record_rep
from tests.unit.suite.test_subject import copy_suite

pytestmark = pytest.mark.heavy


def scored_by_old_code(work: Path, verdict_was: str | None = None) -> None:
    """Rewrite the folder as an evalkit with other scoring code would have left it: each rep
    declares another scoring hash, and (optionally) the first one was scored differently."""
    records = Workdir(work)
    lines = records.read_evidence_index().items
    rows = (work / "results.tsv").read_text().splitlines()
    for index, line in enumerate(lines):
        line.declarations["checker_source"] = "sha256:" + "0" * 64
        if verdict_was is not None and index == 0:
            check = work / line.evidence / "check.json"
            kept = Verdict.model_validate_json(check.read_text())
            kept = kept.model_copy(update={"verdict": verdict_was, "axis_a": "A:FAIL"})
            check.write_text(kept.model_dump_json(indent=2) + "\n")
            line.file_hashes["check"] = sha256_file(check)
            line.verdict = verdict_was  # type: ignore[assignment]
            cells = rows[1].split("\t")
            cells[2], cells[4] = "A:FAIL", verdict_was
            rows[1] = "\t".join(cells)
        old_bundle = line.bundle_id
        line.bundle_id = bundle_id(line.declarations)
        rows = [r.replace(old_bundle, line.bundle_id) for r in rows]
    records.evidence_index.write_text("".join(x.model_dump_json() + "\n" for x in lines))
    (work / "results.tsv").write_text("\n".join(rows) + "\n")


@pytest.fixture
def work(recorded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))


def test_rows_scored_by_older_code_are_named_so_and_not_publishable(
    suite: Suite, work: Path
) -> None:
    scored_by_old_code(work, verdict_was="FAIL")
    got = verify_workdir(suite, work)
    assert [(t.ok, t.older_code) for t in got.trials] == [(True, True), (True, True)], [
        t.problems for t in got.trials
    ]
    assert not got.publishable
    assert any(
        "2 row(s) scored-by-older-code: `evalkit results rescore " in p
        for p in got.publish_problems
    )
    assert not any("re-derive" in p for p in got.publish_problems), got.publish_problems


def test_an_edit_to_evidence_scored_by_older_code_is_still_tampering(
    suite: Suite, work: Path
) -> None:
    scored_by_old_code(work)
    line = Workdir(work).read_evidence_index().items[0]
    (work / line.evidence / "transcript.jsonl").write_text("{}\n")
    first = verify_workdir(suite, work).trials[0]
    assert "evidence-edited:transcript" in first.problems


def test_rescore_writes_new_rows_beside_the_old_and_the_folder_verifies(
    suite: Suite, work: Path
) -> None:
    scored_by_old_code(work, verdict_was="FAIL")
    before = (work / "results.tsv").read_text()
    done = rescore_workdir(suite, Workdir(work))
    assert done.refused == []
    assert len(done.rescored) == 2 and done.rescored[0].endswith(": FAIL -> PASS")
    after = (work / "results.tsv").read_text()
    assert after.startswith(before), "old rows are never rewritten"
    rows = read_results(work / "results.tsv").plain_rows
    assert [r.verdict for r in rows] == ["FAIL", "PASS", "PASS", "PASS"]
    got = verify_and_record(suite, work)
    assert got.publishable, (got.publish_problems, got.count_problems)
    assert sum(1 for t in got.trials if t.rescored) == 2
    report = build_report(suite, work)
    assert report.rows == 2 and report.rescored_rows == 2
    assert report.publishability.publishable
    assert rescore_workdir(suite, Workdir(work)).rescored == []


def test_rescore_refuses_evidence_that_was_edited(suite: Suite, work: Path) -> None:
    scored_by_old_code(work)
    line = Workdir(work).read_evidence_index().items[0]
    (work / line.evidence / "transcript.jsonl").write_text("{}\n")
    done = rescore_workdir(suite, Workdir(work))
    assert len(done.rescored) == 1
    [refused] = done.refused
    assert refused.startswith("r1 P1-L1-reporting policy:oracle rep-1: evidence-edited:transcript")


def test_the_rescore_command_names_what_it_did(suite: Suite, work: Path) -> None:
    scored_by_old_code(work)
    result = CliRunner().invoke(
        app, ["--suite", str(REPO), "results", "rescore", str(work)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "2 rep(s) re-scored under run id(s) " in result.stdout
    again = CliRunner().invoke(app, ["--suite", str(REPO), "results", "rescore", str(work)])
    assert "nothing to re-score" in again.stdout


def test_an_evidence_line_names_the_run_it_rescores() -> None:
    line = EvidenceLine.model_validate(
        json.loads(
            '{"run_id":"r2","scenario":"P1","model":"m","rep":1,"evidence":"e","files":{},'
            '"declarations":{},"bundle_id":"b","verdict":"PASS","rescore_of":"r1"}'
        )
    )
    assert line.rescore_of == "r1"


VARIANT_CONFIG = (
    "subject: [fixtures/plugins/os-vault, fixtures/project/CLAUDE.md]\n"
    "variants:\n  terse: {overlay: variants/terse}\n"
)


def test_a_rescored_variant_rep_keeps_its_declarations_and_verifies(tmp_path: Path) -> None:
    made = copy_suite(tmp_path / "suite", VARIANT_CONFIG)
    (made.root / "fixtures/project/CLAUDE.md").write_text("the suite's own wording\n")
    overlay = made.root / "variants/terse/fixtures/project/CLAUDE.md"
    overlay.parent.mkdir(parents=True)
    overlay.write_text("the variant's wording\n")
    suite = Suite(made.root)
    freeze(suite)
    work = tmp_path / "work"
    ctx = context(suite, work)
    ctx.subject = build_subject(suite, variant="terse")
    record_plan(ctx, [PlanCell(scenario="P1-L1-reporting", model="policy:oracle", reps=1,
                               variant="terse")], "fabricated")  # fmt: skip
    record_rep(ctx, "P1-L1-reporting", "policy:oracle", 1)
    scored_by_old_code(work)
    (before,) = Workdir(work).read_evidence_index().items
    done = rescore_workdir(suite, Workdir(work))
    assert done.refused == [] and len(done.rescored) == 1
    after = Workdir(work).read_evidence_index().items[-1]
    changed = {
        k for k in before.declarations.keys() | after.declarations.keys()
        if before.declarations.get(k) != after.declarations.get(k)
    }  # fmt: skip
    assert changed == {"checker_source"}, changed
    assert (after.declarations["variant"], after.declarations["subject_hash"]) == (
        "terse",
        ctx.the_subject().hash,
    )
    row = read_results(work / "results.tsv").rows[-1][1]
    assert (row.run_id, row.variant, row.subject_hash) == (
        after.run_id,
        "terse",
        ctx.the_subject().hash,
    )
    got = verify_and_record(suite, work)
    assert got.publishable, (got.publish_problems, got.count_problems)


def test_a_rescore_replaces_only_what_scoring_changes_and_keeps_every_other_declaration(
    suite: Suite,
) -> None:
    recorded = {
        "suite": suite.name, "variant": "terse", "subject_hash": "sha256:" + "1" * 64,
        "checker": "old@0", "checker_source": "sha256:" + "0" * 64, "lock": "frozen",
        "evalkit_version": "0.0.1", "judge": {"kind": "fixed"}, "a_field_yet_to_come": [1, 2],
    }  # fmt: skip
    again = rescored_declarations(suite, recorded)
    kept = {k for k in recorded if again[k] == recorded[k]}
    assert set(recorded) - kept <= {"checker", "checker_source", "lock", "evalkit_version"}
    assert {"variant", "subject_hash", "judge", "a_field_yet_to_come"} <= kept
    assert again["checker_source"] != recorded["checker_source"]

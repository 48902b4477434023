"""verify on fabricated results folders: what it re-derives, what it names, and when it stops."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.models import ResultRow
from evalkit.records.folder.results import COLUMNS, append_row
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.build import build_report
from evalkit.records.verify import rederive as verify
from evalkit.records.verify.record import verify_and_record
from evalkit.records.verify.rederive import REPLAYS_AT_ONCE, verify_workdir
from evalkit.suite.config import Suite
from tests.unit.records.folder import recorded_folder

pytestmark = pytest.mark.heavy


@pytest.fixture
def work(recorded: Path, tmp_path: Path) -> Path:
    """A private copy of the recorded folder (its records name paths relative to it)."""
    return Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))


def test_a_fabricated_folder_re_derives_and_is_publishable(suite: Suite, work: Path) -> None:
    got = verify_workdir(suite, work)
    assert [t.problems for t in got.trials] == [[], []]
    assert got.count_problems == [] and got.publishable, got.publish_problems


def test_a_row_appended_without_evidence_makes_the_folder_not_publishable(
    suite: Suite, work: Path
) -> None:
    append_row(
        work / "results.tsv",
        ResultRow(
            scenario="N2-L2-reporting", model="sonnet", a="A:PASS", b="B:n/a", verdict="PASS",
            reasons="-",
        ),
    )  # fmt: skip
    got = verify_and_record(suite, work)
    assert not got.publishable
    assert "results.tsv:4: row without evidence: N2-L2-reporting sonnet 0 (no run id)" in (
        got.count_problems
    ), got.count_problems
    assert "1 row(s) without evidence" in got.publish_problems
    banner = build_report(suite, work).publishability
    assert not banner.publishable and "1 row(s) without evidence" in banner.verdict


def test_a_pasted_row_with_a_recorded_run_id_is_named_too(suite: Suite, work: Path) -> None:
    lines = (work / "results.tsv").read_text().splitlines()
    with (work / "results.tsv").open("a") as fh:
        fh.write(lines[1].replace("\tPASS\t", "\tFAIL\t").replace("\t1\tr1\t", "\t7\tr1\t") + "\n")
    got = verify_workdir(suite, work)
    assert not got.publishable
    assert any(p.startswith("results.tsv:4: row without evidence: r1 ") for p in got.count_problems)


@pytest.mark.parametrize("name", ["check.json", "process.json", "judge.json"])
def test_a_corrupt_evidence_file_names_that_trial_and_verify_goes_on(
    suite: Suite, work: Path, name: str
) -> None:
    records = Workdir(work)
    lines = records.read_evidence_index().items
    target = work / lines[0].evidence / name
    target.write_text("{ this is not json")
    if name not in lines[0].files.values():
        lines[0].files = {**lines[0].files, "judge": name}
        records.evidence_index.write_text("".join(x.model_dump_json() + "\n" for x in lines))
    got = verify_workdir(suite, work)
    first, second = got.trials
    assert not first.ok and second.ok, (first.problems, second.problems)
    role = name.removesuffix(".json")
    assert f"unreadable-evidence:{role}" in first.problems or any(
        "evidence-edited" in p for p in first.problems
    ), first.problems


def test_a_bad_tsv_row_is_named_with_its_line_number(suite: Suite, work: Path) -> None:
    with (work / "results.tsv").open("a") as fh:
        fh.write("P1-L1-reporting\tpolicy:oracle\tnot enough cells\n")
    got = verify_workdir(suite, work)
    assert got.unreadable == [f"results.tsv:4: 3 columns, expected {len(COLUMNS)}"]
    assert [t.ok for t in got.trials] == [True, True]
    assert not got.publishable


def test_a_garbage_plan_line_is_named_and_verify_goes_on(suite: Suite, work: Path) -> None:
    with (work / "plans.jsonl").open("a") as fh:
        fh.write("garbage\n")
    got = verify_workdir(suite, work)
    assert got.unreadable == ["plans.jsonl:2: unreadable plan line"]
    assert [t.ok for t in got.trials] == [True, True]
    report = build_report(suite, work)
    assert report.unreadable == ["plans.jsonl:2: unreadable plan line"]


def test_when_only_counts_differ_the_verdict_names_the_count_problem(
    suite: Suite, work: Path
) -> None:
    plans = work / "plans.jsonl"
    plan = json.loads(plans.read_text().splitlines()[0])
    plan["cells"][0]["reps"] = 2
    plans.write_text(json.dumps(plan) + "\n")
    got = verify_workdir(suite, work)
    assert got.failed_trials == 0
    assert not any("re-derive" in p for p in got.publish_problems), got.publish_problems
    assert "2 count problem(s): planned reps, manifest lines and rows disagree" in (
        got.publish_problems
    )
    assert "plan r1 P1-L1-reporting policy:oracle: 2 rep(s) planned, 1 recorded" in (
        got.count_problems
    )


@pytest.mark.parametrize("at_once", [1, REPLAYS_AT_ONCE])
def test_a_tampered_diff_is_caught_among_reps_that_share_its_baseline(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_once: int
) -> None:
    """Reps of one cell replay over the same baseline, read once, in folders reused from rep
    to rep (one at a time, every rep in the same folder): the one whose kept note was edited
    re-derives otherwise, the reps before and after it do not."""
    monkeypatch.setattr(verify, "REPLAYS_AT_ONCE", at_once)
    work = tmp_path / "work"
    recorded_folder(suite, work, [("P1-L1-reporting", "policy:oracle", 3)])
    lines = Workdir(work).read_evidence_index().items
    diff = work / lines[1].evidence / lines[1].files["vault_diff"]
    edited = diff.read_text().replace("\n+title: ", "\n+titel: ", 1)
    assert edited != diff.read_text()
    diff.write_text(edited)
    first, second, third = verify_workdir(suite, work).trials
    assert first.ok and third.ok, (first.problems, third.problems)
    assert "evidence-edited:vault_diff" in second.problems
    assert any(
        p.startswith("check.json verdict 'PASS' re-derived as 'FAIL'") for p in second.problems
    ), second.problems

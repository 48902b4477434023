"""verify of reps whose subject reaches into a fixture: the kept subject is their baseline."""

from __future__ import annotations

from pathlib import Path

from evalkit.records.verify import verify_workdir
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from tests.unit.records.folder import recorded_folder
from tests.unit.suite.test_subject import copy_suite

WORDING = "subject: [fixtures/plugins/os-vault, fixtures/project/CLAUDE.md]\n"


def _recorded(tmp_path: Path) -> tuple[Suite, Path]:
    made = copy_suite(tmp_path / "suite", WORDING)
    (made.root / "fixtures/project/CLAUDE.md").write_text("the wording under test\n")
    suite = Suite(made.root)
    freeze(suite)
    work = tmp_path / "work"
    recorded_folder(suite, work, [("P1-L1-reporting", "policy:oracle", 1)])
    return suite, work


def test_a_rep_re_derives_against_the_subject_it_kept(tmp_path: Path) -> None:
    suite, work = _recorded(tmp_path)
    got = verify_workdir(suite, work)
    assert [t.problems for t in got.trials] == [[]] and got.publishable, got.publish_problems


def test_a_kept_subject_edited_after_the_run_is_named(tmp_path: Path) -> None:
    suite, work = _recorded(tmp_path)
    (kept,) = (work / "subjects").iterdir()
    (kept / "fixtures/project/CLAUDE.md").write_text("wording edited after the run\n")
    got = verify_workdir(suite, work)
    assert not got.publishable
    (problems,) = [t.problems for t in got.trials]
    assert len(problems) == 1 and problems[0].startswith("subject-not-kept:"), problems
    assert "edited since the run" in problems[0]


def test_a_kept_subject_linked_from_outside_the_folder_is_named(tmp_path: Path) -> None:
    suite, work = _recorded(tmp_path)
    (kept,) = (work / "subjects").iterdir()
    outside = tmp_path / "outside"
    kept.rename(outside)
    kept.symlink_to(outside)
    got = verify_workdir(suite, work)
    assert not got.publishable
    (problems,) = [t.problems for t in got.trials]
    assert len(problems) == 1 and "outside the folder" in problems[0], problems

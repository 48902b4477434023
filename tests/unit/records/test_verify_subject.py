"""verify of reps whose subject reaches into a fixture: the kept subject is their baseline."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from evalkit.models import PlanCell, ResultRow
from evalkit.records.verify.rederive import verify_workdir
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from evalkit.suite.subject import build_subject
from tests.unit.records.conftest import CELLS as RECORDED
from tests.unit.records.folder import context, record_rep, recorded_folder
from tests.unit.suite.test_subject import copy_suite

pytestmark = pytest.mark.heavy

WORDING = "subject: [fixtures/plugins/os-vault, fixtures/project/CLAUDE.md]\n"
CELLS = [scenario for scenario, _, _ in RECORDED]


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


def test_a_kept_subject_edited_after_the_run_is_named() -> None:
    # verify cuts a problem to 120 characters, path included: a short folder, so that the
    # reason is whole under any temp root (pytest-xdist's are longer)
    with tempfile.TemporaryDirectory(prefix="ek-") as short:
        suite, work = _recorded(Path(short))
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


@pytest.mark.parametrize(
    "wording", ["fixtures/project/CLAUDE.md", "fixtures/vault/WORDING.md"], ids=["project", "vault"]
)
def test_a_variant_wording_inside_a_fixture_is_not_the_agents_write(
    tmp_path: Path, wording: str
) -> None:
    config = f"subject: [fixtures/plugins/os-vault, {wording}]\n"
    config += "variants:\n  terse: {overlay: variants/terse}\n"
    made = copy_suite(tmp_path / "suite", config)
    (made.root / wording).write_text("the suite's own wording\n")
    overlay = made.root / "variants/terse" / wording
    overlay.parent.mkdir(parents=True)
    overlay.write_text("the variant's wording\n")
    suite = Suite(made.root)
    freeze(suite)

    def rows(work: Path, variant: str) -> list[ResultRow]:
        ctx = context(suite, work)
        ctx.subject = build_subject(suite, variant=variant)
        cells = [PlanCell(scenario=s, model="policy:oracle", reps=1, variant=variant)
                 for s in CELLS]  # fmt: skip
        record_plan(ctx, cells, "fabricated")
        return [record_rep(ctx, s, "policy:oracle", 1).row for s in CELLS]

    terse, own = rows(tmp_path / "terse", "terse"), rows(tmp_path / "own", "suite")
    assert [(r.verdict, r.flags) for r in terse] == [(r.verdict, r.flags) for r in own]
    assert [r.verdict for r in terse] == ["PASS", "PASS"]
    assert "project-write:no" in terse[0].flags
    got = verify_workdir(suite, tmp_path / "terse")
    assert got.publishable, (got.publish_problems, [t.problems for t in got.trials])

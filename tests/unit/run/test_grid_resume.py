"""`grid --resume` of a grid with variants: which variant each missing rep belongs to."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.models import EvidenceLine, Plan, PlanCell
from evalkit.records.folder.workdir import Workdir
from evalkit.run.context import RunContext
from evalkit.run.grid import GridCell, expand_cells, plan_cells, resume_cells
from evalkit.suite.config import Suite
from evalkit.suite.subject import Subject

SCENARIO = "P1-L1-reporting"


def _context(suite: Suite, work: Path, own: str = "suite") -> RunContext:
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r-new")
    ctx.subject = Subject(work, [], [], own, "sha256:" + "0" * 64)
    return ctx


def _plan(work: Path, run_id: str, *cells: tuple[str, list[int]]) -> None:
    planned = [
        PlanCell(scenario=SCENARIO, model="m", reps=len(reps), variant=v, rep_numbers=reps)
        for v, reps in cells
    ]
    Workdir(work).append_plan(
        Plan(run_id=run_id, created="2026-01-01T00:00:00+00:00", command="grid", cells=planned)
    )


def _recorded(work: Path, run_id: str, rep: int, variant: str) -> None:
    line = EvidenceLine(
        run_id=run_id, scenario=SCENARIO, model="m", rep=rep,
        evidence=f"evidence/{run_id}/{rep}", files={}, declarations={"variant": variant},
        bundle_id="evb-0", verdict="PASS",
    )  # fmt: skip
    Workdir(work).append_evidence_line(line)


def _cells(suite: Suite, reps: int, variants: list[str] | None) -> list[GridCell]:
    return expand_cells([suite.resolve(SCENARIO)], ["m"], reps, variants)


def _left(cells: list[GridCell]) -> list[tuple[int, str, str | None]]:
    return [(c.rep, c.variant, c.run_id) for c in cells]


def test_a_stopped_two_variant_grid_resumes_only_the_missing_variants_reps(
    suite: Suite, tmp_path: Path
) -> None:
    _plan(tmp_path, "r1", ("suite", [1, 3]), ("terse", [2, 4]))
    for rep, variant in ((1, "suite"), (2, "terse"), (3, "suite")):
        _recorded(tmp_path, "r1", rep, variant)
    left, problems = resume_cells(_context(suite, tmp_path), _cells(suite, 2, ["suite", "terse"]))
    assert _left(left) == [(4, "terse", "r1")] and problems == []


def _stopped_two_variant_grid(work: Path) -> None:
    _plan(work, "r1", ("suite", [1, 3]), ("terse", [2, 4]))
    for rep, variant in ((1, "suite"), (2, "terse"), (3, "suite")):
        _recorded(work, "r1", rep, variant)


def test_resuming_with_the_variants_reordered_is_refused_naming_the_order(
    suite: Suite, tmp_path: Path
) -> None:
    _stopped_two_variant_grid(tmp_path)
    with pytest.raises(RefusedError, match=r"perhaps --variants suite,terse\)$"):
        resume_cells(_context(suite, tmp_path), _cells(suite, 2, ["terse", "suite"]))


def test_resuming_with_a_variant_added_is_refused(suite: Suite, tmp_path: Path) -> None:
    _stopped_two_variant_grid(tmp_path)
    with pytest.raises(RefusedError, match="already planned or recorded for variant"):
        resume_cells(_context(suite, tmp_path), _cells(suite, 2, ["suite", "terse", "brief"]))


def test_a_single_variant_grid_counts_its_reps_as_its_own_variants(
    suite: Suite, tmp_path: Path
) -> None:
    _plan(tmp_path, "r1", ("", [1, 2]))
    _recorded(tmp_path, "r1", 1, "terse")
    left, _ = resume_cells(_context(suite, tmp_path, own="terse"), _cells(suite, 2, None))
    assert _left(left) == [(2, "", "r1")]


def test_a_rep_another_variant_planned_is_not_adopted_into_this_variants_run(
    suite: Suite, tmp_path: Path
) -> None:
    _plan(tmp_path, "r1", ("terse", [1]))
    left, _ = resume_cells(_context(suite, tmp_path), _cells(suite, 1, ["suite"]))
    assert _left(left) == [(1, "suite", None)]


def test_a_plan_names_the_variant_of_cells_that_name_none(suite: Suite) -> None:
    assert [c.variant for c in plan_cells(_cells(suite, 2, None), "terse")] == ["terse"]

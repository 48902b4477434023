"""`grid --resume` runs a rep a stop ended again, as its next attempt, and that attempt
supersedes the interrupted one everywhere a rep is counted; the interrupted line and row stay
in the folder."""

from __future__ import annotations

from pathlib import Path

from evalkit.models import EvidenceLine, Plan, PlanCell, ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import Workdir
from evalkit.records.verify.counts import counted_rows, final_lines
from evalkit.run.context import RunContext
from evalkit.run.grid import expand_cells, resume_cells
from evalkit.suite.config import Suite
from evalkit.suite.subject import Subject

SCENARIO = "P1-L1-reporting"


def _line(rep: int, verdict: str, attempt: int = 1, supersedes: int | None = None) -> EvidenceLine:
    return EvidenceLine(
        run_id="r1", scenario=SCENARIO, model="m", rep=rep, evidence=f"evidence/{rep}/{attempt}",
        files={}, declarations={"variant": "suite"}, bundle_id="evb-0", verdict=verdict,
        attempt=attempt, supersedes=supersedes,
    )  # fmt: skip


def _row(rep: int, verdict: str, reasons: str, attempt: int = 1) -> ResultRow:
    return ResultRow(scenario=SCENARIO, model="m", a="A:ERROR", b="B:ERROR", verdict=verdict,  # type: ignore[arg-type]
                     reasons=reasons, rep=rep, run_id="r1", attempt=attempt)  # fmt: skip


def _folder(work: Path, *recorded: tuple[int, str, str]) -> None:
    records = Workdir(work)
    cell = PlanCell(scenario=SCENARIO, model="m", reps=len(recorded))
    records.append_plan(Plan(run_id="r1", created="2026-01-01T00:00:00+00:00", command="grid",
                             cells=[cell]))  # fmt: skip
    for rep, verdict, reasons in recorded:
        records.append_evidence_line(_line(rep, verdict))
        append_row(work / "results.tsv", _row(rep, verdict, reasons))


def _resumed(suite: Suite, work: Path, reps: int) -> list[tuple[int, str | None, int]]:
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r-new")
    ctx.subject = Subject(work, [], [], "suite", "sha256:" + "0" * 64)
    left, _ = resume_cells(ctx, expand_cells([suite.resolve(SCENARIO)], ["m"], reps))
    return [(c.rep, c.run_id, c.after) for c in left]


def test_an_interrupted_rep_runs_again_as_its_next_attempt(suite: Suite, tmp_path: Path) -> None:
    _folder(tmp_path, (1, "PASS", "-"), (2, "ERROR", "interrupted"), (3, "ERROR", "timeout:3s"))
    assert _resumed(suite, tmp_path, 3) == [(2, "r1", 1)]


def test_an_interrupted_rep_that_breached_first_keeps_its_row(
    suite: Suite, tmp_path: Path
) -> None:
    _folder(tmp_path, (1, "ERROR", "real-vault-breach:Write;interrupted"))
    assert _resumed(suite, tmp_path, 1) == []


def test_a_resumed_attempt_supersedes_the_interrupted_one_which_stays() -> None:
    lines = [_line(1, "ERROR"), _line(2, "PASS"), _line(1, "PASS", attempt=2, supersedes=1)]
    assert [(x.rep, x.attempt) for x in final_lines(lines)] == [(2, 1), (1, 2)]
    rows = [_row(1, "ERROR", "interrupted"), _row(2, "PASS", "-"), _row(1, "PASS", "-", 2)]
    assert [(r.rep, r.attempt) for r in counted_rows(rows, lines)] == [(2, 1), (1, 2)]


def test_an_interrupted_rep_resumed_once_is_not_run_a_third_time(
    suite: Suite, tmp_path: Path
) -> None:
    _folder(tmp_path, (1, "ERROR", "interrupted"))
    Workdir(tmp_path).append_evidence_line(_line(1, "PASS", attempt=2, supersedes=1))
    append_row(tmp_path / "results.tsv", _row(1, "PASS", "-", 2))
    assert _resumed(suite, tmp_path, 1) == []

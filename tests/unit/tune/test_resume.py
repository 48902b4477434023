"""An interrupted tune is taken up from its lineage, never mixed with another tune's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.suite.config import Suite
from evalkit.tune.plan import TuneRequest
from evalkit.tune.resume import start_line, taken
from tests.tuning_suite import write_tuning_suite

PATHS = ["fixtures/plugins/notes"]


def _request(tmp_path: Path, reps: int = 2) -> TuneRequest:
    suite = Suite(write_tuning_suite(tmp_path / "suite"))
    return TuneRequest(suite, tmp_path / "work", ["policy:phrase:keep"], reps=reps,
                       proposer_cmd="true")  # fmt: skip


def _write(work: Path, *lines: dict[str, object]) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "tune.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_the_rounds_decided_before_the_interrupt_are_kept(tmp_path: Path) -> None:
    request = _request(tmp_path)
    first = {"kind": "round", "round": 1, "variant": "tune-1", "parent": "suite",
             "diff_hash": "sha256:1", "brief_hash": "sha256:2", "decision": "accepted",
             "reason": "better", "tune": "tune-x"}  # fmt: skip
    _write(request.workdir, start_line("tune-x", request, PATHS), first)
    found = taken(request.workdir, request, PATHS)
    assert found is not None and found.tune_id == "tune-x"
    assert [r.variant for r in found.rounds] == ["tune-1"]


def test_a_workdir_of_other_settings_is_refused(tmp_path: Path) -> None:
    request = _request(tmp_path)
    _write(request.workdir, start_line("tune-x", request, PATHS))
    request.reps = 3
    with pytest.raises(RefusedError, match="ran with other reps"):
        taken(request.workdir, request, PATHS)


def test_a_finished_tune_is_never_taken_up_again(tmp_path: Path) -> None:
    request = _request(tmp_path)
    stop = {"kind": "stop", "tune": "tune-x", "reason": "done", "code": 3}
    _write(request.workdir, start_line("tune-x", request, PATHS), stop)
    with pytest.raises(RefusedError, match="holds a finished tune"):
        taken(request.workdir, request, PATHS)


def test_a_rep_resumed_after_the_interrupt_counts_once_by_its_resumed_attempt(
    tmp_path: Path,
) -> None:
    from evalkit.models import EvidenceLine, Plan, PlanCell, ResultRow
    from evalkit.records.folder.results import append_row
    from evalkit.records.folder.workdir import Workdir
    from evalkit.tune.resume import counted

    def line(rep: int, verdict: str, attempt: int = 1, again: int | None = None) -> EvidenceLine:
        return EvidenceLine(run_id="r1", scenario="P1", model="m", rep=rep,
                            evidence=f"evidence/{rep}/{attempt}", files={},
                            declarations={"variant": "suite"}, bundle_id="evb-0",
                            verdict=verdict, attempt=attempt, supersedes=again)  # fmt: skip

    def row(rep: int, verdict: str, reasons: str, attempt: int = 1) -> ResultRow:
        return ResultRow(scenario="P1", model="m", a="A", b="B", verdict=verdict,  # type: ignore[arg-type]
                         reasons=reasons, rep=rep, run_id="r1", attempt=attempt)  # fmt: skip

    records = Workdir(tmp_path)
    records.append_plan(Plan(run_id="r1", created="2026-01-01T00:00:00+00:00", command="grid",
                             cells=[PlanCell(scenario="P1", model="m", reps=2)]))  # fmt: skip
    for rep, verdict, reasons, attempt, again in ((1, "PASS", "-", 1, None),
                                                  (2, "ERROR", "interrupted", 1, None),
                                                  (2, "PASS", "-", 2, 1)):  # fmt: skip
        records.append_evidence_line(line(rep, verdict, attempt, again))
        append_row(tmp_path / "results.tsv", row(rep, verdict, reasons, attempt))
    assert [(r.rep, r.verdict) for r in counted(tmp_path)] == [(1, "PASS"), (2, "PASS")]


def test_the_reps_a_proposer_agent_spent_count_after_the_interrupt(tmp_path: Path) -> None:
    request = _request(tmp_path)
    ran = {"kind": "proposer", "tune": "tune-x", "round": 1, "proposer": "claude:haiku",
           "reps": 1, "cost_usd": 0.01, "failed": ""}  # fmt: skip
    _write(request.workdir, start_line("tune-x", request, PATHS), ran)
    found = taken(request.workdir, request, PATHS)
    assert found is not None and found.spent == 1


def test_a_workdir_of_another_proposer_agent_is_refused(tmp_path: Path) -> None:
    request = _request(tmp_path)
    request.proposer_cmd, request.proposer = None, "claude:policy:propose:description=a"
    _write(request.workdir, start_line("tune-x", request, PATHS))
    request.proposer = "claude:policy:propose:description=b"
    with pytest.raises(RefusedError, match="ran with other proposer"):
        taken(request.workdir, request, PATHS)


def test_the_dollars_spent_before_the_interrupt_count_against_the_cap(tmp_path: Path) -> None:
    from evalkit.models import ResultRow
    from evalkit.records.folder.results import append_row

    request = _request(tmp_path)
    ran = {"kind": "proposer", "tune": "tune-x", "round": 1, "proposer": "claude:haiku",
           "reps": 1, "cost_usd": 0.25, "failed": ""}  # fmt: skip
    _write(request.workdir, start_line("tune-x", request, PATHS), ran)
    (request.workdir / "baseline").mkdir()
    for model, usd in (("sonnet", 0.5), ("policy:oracle", 9.0)):
        append_row(request.workdir / "baseline" / "results.tsv",
                   ResultRow(scenario="P1", model=model, a="A", b="B", verdict="PASS",
                             reasons="-", rep=1, run_id="r1", cost_usd_estimate=usd))  # fmt: skip
    found = taken(request.workdir, request, PATHS)
    assert found is not None and (found.spent, found.spent_usd) == (3, 0.75)


HOLD = """
import sys
from pathlib import Path
from evalkit.records.folder.gridlock import hold_grid_lock
with hold_grid_lock(Path(sys.argv[1]), "tune work", what="tune"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_tune_of_the_same_workdir_is_refused_while_the_first_runs(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from evalkit.records.folder.gridlock import GridBusyError
    from evalkit.records.folder.workdir import Workdir
    from evalkit.suite.lock import freeze
    from evalkit.tune.loop import tune

    request = _request(tmp_path)
    request.margin = 0.5  # small enough a suite for the size rule: the lock is what is tested
    request.budget_reps = 1  # without the lock, it would stop before its baseline
    freeze(request.suite)
    request.workdir.mkdir(parents=True)
    first = subprocess.Popen([sys.executable, "-c", HOLD, str(Workdir(request.workdir).grid_lock)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert first.stdout is not None and first.stdout.readline() == "held\n"
        with pytest.raises(GridBusyError, match="another tune is running"):
            tune(request)
    finally:
        first.communicate("", timeout=30)
    assert not (request.workdir / "tune.jsonl").exists()

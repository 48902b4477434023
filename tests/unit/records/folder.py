"""A results folder recorded without any model: fabricated runs through the real recorder.

Each rep plays the checker's ideal self-test case into a fresh sandbox, then goes through
the same code that ends a real rep (verdict, evidence, manifest line, row), so `verify`,
`report` and `grid --resume` can be tested on folders that re-derive for real.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from evalkit.models import GuardRecord, PlanCell
from evalkit.records.folder.results import append_row
from evalkit.reference.cases import self_test_cases
from evalkit.reference.fabricate import fabricate
from evalkit.reference.placeholders import render
from evalkit.reference.selftest import isolation_env
from evalkit.run.agent import ProcessOutcome
from evalkit.run.context import RunContext, record_plan
from evalkit.run.rep import RepOutcome, _score_and_keep
from evalkit.run.sandbox import TRANSCRIPT, build_sandbox
from evalkit.scoring.decide import guarded_env_now
from evalkit.scoring.judge import FixedJudge
from evalkit.suite.config import Suite

NO_CLI = Path("/nonexistent/claude")


def context(suite: Suite, work: Path, run_id: str = "r1") -> RunContext:
    return RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id=run_id)


def record_rep(
    ctx: RunContext, scenario_ref: str, model: str, rep: int, case_name: str | None = None
) -> RepOutcome:
    """One fabricated rep of the scenario's ideal behaviour (or of the self-test case named,
    such as `cut-before-result`), recorded as `run` records one."""
    suite = ctx.suite
    scenario = suite.resolve(scenario_ref)
    cases = self_test_cases(suite.reference, scenario)
    case = next(c for c in cases if c.name == case_name) if case_name else cases[0]
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-fab-"))
    try:
        sandbox = scratch / "sandbox"
        build_sandbox(suite, scenario, sandbox)
        subject = ctx.the_subject()
        subject.keep(ctx.workdir)
        subject.apply(suite, sandbox)
        names = list(suite.fixture_dirs())
        guarded = guarded_env_now(suite.checker)
        script = render(case.script, sandbox, names, suite.reference.script_values(guarded))
        hook_output = " ".join(h.output_contains for h in suite.config.required_hooks)
        lines = fabricate(script, sandbox, isolation_env(suite, sandbox), hook_output, case.fault)
        (sandbox / TRANSCRIPT).write_text("\n".join(lines) + "\n", encoding="utf-8")
        folder = ctx.records.claim_evidence_folder(ctx.run_id, scenario.id, model, rep)
        done = _score_and_keep(
            ctx, ctx.run_id, scenario, model, rep, 1, sandbox, ProcessOutcome(0, 1.0),
            FixedJudge(case.judge_answer), NO_CLI, ctx.timeout, folder, guarded, GuardRecord(),
            {},
        )  # fmt: skip
        ctx.records.append_evidence_line(done.line)
        append_row(ctx.results, done.row)
        return RepOutcome(scenario.id, model, rep, done.verdict, done.row, folder, 1.0)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def recorded_folder(
    suite: Suite, work: Path, cells: list[tuple[str, str, int]], run_id: str = "r1"
) -> RunContext:
    """A folder whose plan is `cells` (scenario, model, reps), every rep recorded."""
    ctx = context(suite, work, run_id)
    record_plan(ctx, [PlanCell(scenario=s, model=m, reps=n) for s, m, n in cells], "fabricated")
    for scenario, model, reps in cells:
        for rep in range(1, reps + 1):
            record_rep(ctx, scenario, model, rep)
    return ctx


GRID_DIGEST = "grid-fab0000000000001"


def shard_folder(
    suite: Suite,
    work: Path,
    grid: list[tuple[str, str, int]],
    shard: str,
    run_id: str = "rfab00000001",
) -> RunContext:
    """Shard I/N of `grid` (scenario, model, rep; one entry per rep), cut as `grid --shard`
    cuts it (strided over the stable order) and every rep of the slice recorded."""
    index, count = (int(x) for x in shard.split("/"))
    ctx = context(suite, work, run_id)
    ctx.plan_extra = {"grid_digest": GRID_DIGEST, "shard": shard, "grid_cells": len(grid)}
    part = sorted(grid)[index - 1 :: count]
    cells = [PlanCell(scenario=s, model=m, reps=1, rep_numbers=[r]) for s, m, r in part]
    record_plan(ctx, cells, f"grid --shard {shard}")
    for scenario, model, rep in part:
        record_rep(ctx, scenario, model, rep)
    return ctx


CALIBRATION = [
    ("P1-L1-reporting", "policy:oracle", "PASS", None),
    ("N1-L1-reporting", "policy:oracle", "PASS", None),
    ("P1-L1-reporting", "policy:fault-cut", "ERROR", "cut-before-result"),
]
"""(scenario, model, expected verdict, the self-test case that plays it)"""


def calibration_folder(
    suite: Suite, work: Path, run_id: str = "c1", expect: dict[tuple[str, str], str] | None = None
) -> RunContext:
    """Three cells as `calibrate` plans them: the oracle on a positive and a negative, and a
    fault policy whose transcript is cut before its result line (an ERROR by design).
    `expect` overrides the verdict expected of a (scenario, model) cell."""
    ctx = context(suite, work, run_id)
    wanted = expect or {}
    ctx.plan_extra = {
        "calibration": True,
        "expected_verdicts": [
            {"scenario": s, "model": m, "verdict": wanted.get((s, m), v)}
            for s, m, v, _ in CALIBRATION
        ],
    }
    cells = [PlanCell(scenario=s, model=m, reps=1) for s, m, _, _ in CALIBRATION]
    record_plan(ctx, cells, "calibrate --set run")
    for scenario, model, _, case in CALIBRATION:
        record_rep(ctx, scenario, model, 1, case_name=case)
    return ctx

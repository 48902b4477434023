"""A session: a sequence of reps through the pipeline, each attempt retried while its ERROR
is the infrastructure's and a stop ending every rep a lane took in its ERROR row.

`RunSteps` gives the pipeline one rep's steps (`rep.py`); `run_scenario` plans and runs the
reps of one scenario on one model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalkit.models import PlanCell
from evalkit.records.folder.keep import TRANSCRIPT
from evalkit.run.context import RunContext, preflight, record_plan, run_options
from evalkit.run.pipeline import Retry, run_in_order, run_one
from evalkit.run.prerequisites.preflight import prove_instrument
from evalkit.run.rep import (
    LaunchedRep,
    PreparedRep,
    RepOutcome,
    finish_rep,
    launch_rep,
    prepare_rep,
    record_attempt,
)
from evalkit.run.request import validate_request
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.scenarios import ScenarioFile


@dataclass(frozen=True)
class RepJob:
    """One planned rep and the context it records into."""

    ctx: RunContext
    scenario: ScenarioFile
    model: str
    rep: int
    timeout: float | None = None
    run_id: str | None = None
    retries: int | None = None
    after: int = 0
    """The attempt, recorded `ERROR interrupted`, that this job runs again (`grid --resume`):
    its attempts are numbered after it, and its first names it as the one it supersedes."""

    @property
    def allowed(self) -> int:
        return self.ctx.retry_errors if self.retries is None else self.retries


class RunSteps:
    """A real rep's steps: a sandbox, the agent CLI, the scorer and the results folder."""

    def before(self, job: RepJob, attempt: int) -> None:
        job.ctx.backoff.wait(job.ctx.stop)
        job.ctx.retry_wait.before(attempt, job.ctx.stop)

    def prepare(self, job: RepJob, attempt: int) -> PreparedRep:
        return prepare_rep(
            job.ctx, job.scenario, job.model, job.rep, job.after + attempt, job.timeout, job.run_id
        )

    def discard(self, prepared: PreparedRep) -> None:
        prepared.discard()

    def launch(self, job: RepJob, prepared: PreparedRep) -> LaunchedRep:
        return launch_rep(job.ctx, prepared)

    def must_wait(self, job: RepJob, launched: LaunchedRep) -> bool:
        if job.allowed > 0 or job.ctx.max_cost_usd is not None:
            return True
        outcome = launched.outcome
        if outcome.stopped is not None or outcome.exit_code != 0:
            return True
        transcript = launched.prepared.sandbox / TRANSCRIPT
        try:
            lines = transcript.read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            return True
        last = next((line for line in reversed(lines) if line.strip()), "")
        result = parse_lines([last]).result  # a clean end is a result event on the last line
        return result is None or result.is_error

    def finish(
        self, job: RepJob, launched: LaunchedRep, attempt: int, retried: list[str]
    ) -> RepOutcome | Retry:
        done = finish_rep(job.ctx, launched)
        if job.after and attempt == 1:
            done.line.supersedes = job.after
        why = record_attempt(job.ctx, done, attempt, job.allowed)
        if why is not None:
            return Retry(why)
        return done.outcome(job.scenario.id, job.model, job.rep, job.after + attempt, retried)


STEPS = RunSteps()


def run_rep(
    ctx: RunContext,
    scenario: ScenarioFile,
    model: str,
    rep: int,
    timeout: float | None = None,
    run_id: str | None = None,
    retries: int | None = None,
    after: int = 0,
) -> RepOutcome:
    """One rep, start to row: attempt 1 (or the one after the interrupted attempt `after`),
    then a fresh attempt for each infrastructural ERROR while retries last. Every attempt
    keeps its evidence and manifest line; only the last writes the TSV row. A stop requested
    at any point still ends in its ERROR row."""
    return run_one(STEPS, RepJob(ctx, scenario, model, rep, timeout, run_id, retries, after))


def run_scenario(
    ctx: RunContext,
    scenario: ScenarioFile,
    model: str,
    reps: int,
    on_done: Callable[[RepOutcome], None] | None = None,
) -> list[RepOutcome]:
    """REPS reps of one scenario on one model: refused before anything is planned, proven
    first for a real model, planned, then run in order."""
    preflight(ctx.suite, [model], ctx.agent)
    keys = [(ctx.run_id, scenario.id, model, rep) for rep in range(1, reps + 1)]
    validate_request(ctx, [scenario], [model], [], keys)
    if reps == 1:
        ctx.template_sandboxes = False
    ctx.check_records()
    prove_instrument(ctx, scenario, [model], run_scenario)
    record_plan(
        ctx,
        [PlanCell(scenario=scenario.id, model=model, reps=reps)],
        f"run {scenario.id} {model} --reps {reps}" + run_options(ctx),
    )
    jobs = [RepJob(ctx, scenario, model, rep) for rep in range(1, reps + 1)]
    return run_in_order(STEPS, jobs, ctx.stop, on_done).done

"""Running many reps on a bounded pool: plan first, then run, resumable, stoppable.

Each rep is independent and records itself, so a grid is the same files as a shell
loop of `evalkit run … &` would leave; this only adds bounds, resume and progress.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from copy import copy
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError, NotFoundError, RefusedError
from evalkit.models import EvidenceLine, Plan, PlanCell, ResultRow
from evalkit.records.folder.results import read_results, read_rows
from evalkit.records.folder.workdir import tally
from evalkit.records.verify.counts import final_lines
from evalkit.run.context import (
    RunContext,
    new_run_id,
    preflight,
    record_plan,
    record_skipped,
    run_options,
)
from evalkit.run.pipeline import pipeline_enabled, run_jobs
from evalkit.run.prerequisites.cli_versions import resolve as resolve_versions
from evalkit.run.prerequisites.preflight import prove_instrument
from evalkit.run.rep import RepOutcome
from evalkit.run.request import check_agent, check_run_id, validate_request
from evalkit.run.session import STEPS, RepJob, run_rep, run_scenario
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import SUITE_VARIANT, build_subject

SKIPPED_BUDGET = "skipped:budget"


@dataclass(frozen=True)
class GridCell:
    scenario: ScenarioFile
    model: str
    rep: int
    timeout: float | None = None
    run_id: str | None = None
    """Set when the rep belongs to an earlier plan that never recorded it."""
    retries: int | None = None
    """Overrides the run's --retry-errors for this cell (calibrate's flaky policies)."""
    variant: str = ""
    """The subject variant this rep runs with; empty for the context's own subject."""
    cli: str = ""
    """The CLI version this rep runs with (`--cli`); empty for the context's own CLI."""
    after: int = 0
    """The attempt of this rep recorded `ERROR interrupted` that it runs again (`--resume`)."""

    @property
    def arm(self) -> tuple[str, str]:
        return (self.variant, self.cli)


def expand_cells(
    scenarios: list[ScenarioFile],
    models: list[str],
    reps: int,
    variants: list[str] | None = None,
    clis: list[str] | None = None,
) -> list[GridCell]:
    """Every rep; several variants or CLI versions are interleaved rep by rep, so drift in a
    real API over the grid's hours falls on each alike. A rep's number is unique within its
    scenario and model across them (see `variant_rep`)."""
    arms = [(v, c) for v in variants or [""] for c in clis or [""]]
    return [
        GridCell(s, m, variant_rep(k, i, len(arms)), variant=v, cli=c)
        for s in scenarios
        for m in models
        for k in range(1, reps + 1)
        for i, (v, c) in enumerate(arms)
    ]


def variant_rep(rep: int, index: int, count: int) -> int:
    """The number of rep `rep` of the `index`-th of `count` variants of one scenario and
    model: 1..reps*count, interleaved. A rep is named by run id, scenario, model and number
    in every file of a results folder, so variants sharing a run cannot share numbers."""
    return (rep - 1) * count + index + 1


def resume_cells(ctx: RunContext, cells: list[GridCell]) -> tuple[list[GridCell], list[str]]:
    """The cells not recorded yet, and a problem named for each record line that does not
    read. A rep is done when a manifest line records its scenario, model, rep and variant,
    so a stopped grid of several variants resumes exactly the variants' missing reps. A cell
    that an earlier plan holds but never recorded (a stopped grid) is run under that plan's
    run id, so the plan ends up complete and the counts verify. A rep recorded as ERROR
    counts as recorded, but for one a stop ended (`ERROR interrupted`, nothing else named
    first): it runs again under its run id as its next attempt, which supersedes it (the
    interrupted line, row and evidence stay, named, and count no more)."""
    own = ctx.the_subject().variant
    records = ctx.records
    plans = records.read_plans()
    lines = records.read_evidence_index() if records.has_evidence_index() else None
    finals = final_lines(lines.items) if lines else []
    stopped = _interrupted(ctx, plans.items, finals)
    recorded = [(x.run_id, x.scenario, x.model, x.rep) for x in finals]
    done_any = {(x.scenario, x.model, x.rep, _variant(x.declarations)) for x in finals}
    variants = _planned_variants(plans.items, finals)
    owner: dict[tuple[str, str, int, str], str] = {}
    for count in tally(plans.items, recorded):
        for rep in count.unrecorded:
            variant = variants.get((count.run_id, count.scenario, count.model, rep), "")
            owner.setdefault((count.scenario, count.model, rep, variant), count.run_id)
    _refuse_renumbered(cells, own, done_any, variants)
    left = []
    for cell in cells:
        key = _key(cell, own)
        again = stopped.get(key)
        if again is not None:
            left.append(replace(cell, run_id=again.run_id, after=again.attempt))
            continue
        if key in done_any:
            continue
        run_id = owner.get(key) or owner.get((*key[:3], ""))
        left.append(replace(cell, run_id=run_id))
    return left, plans.problems + (lines.problems if lines else [])


INTERRUPTED = "interrupted"
"""The reason `scoring/decide.py` gives a rep a stop ended."""


def _interrupted(
    ctx: RunContext, plans: list[Plan], finals: list[EvidenceLine]
) -> dict[tuple[str, str, int, str], EvidenceLine]:
    """The final attempts whose row says `ERROR interrupted` first, by rep and variant: a
    stop ended them, and nothing else (a breach, a marker) was named before it."""
    errors = [x for x in finals if x.verdict == "ERROR"]
    if not errors:
        return {}
    reasons: dict[tuple[str, str, str, int, int], str] = {}
    for path in ctx.records.results_files(plans, finals):
        for _, row in read_results(path).rows:
            reasons[(row.run_id, row.scenario, row.model, row.rep, row.attempt)] = row.reasons
    return {
        (x.scenario, x.model, x.rep, _variant(x.declarations)): x
        for x in errors
        if reasons.get((x.run_id, x.scenario, x.model, x.rep, x.attempt), "").split(";")[0]
        == INTERRUPTED
    }


def _refuse_renumbered(
    cells: list[GridCell],
    own: str,
    done: set[tuple[str, str, int, str]],
    planned: dict[tuple[str, str, str, int], str],
) -> None:
    """A rep's number depends on the order and count of --variants, so resuming with them
    reordered or changed would hand a number one of this grid's variants already holds to
    another, and run every variant's reps again. Refused, naming an order that fits."""
    held: dict[tuple[str, str, int], set[str]] = {}
    for (_, scenario, model, rep), variant in planned.items():
        if variant:
            held.setdefault((scenario, model, rep), set()).add(variant)
    for scenario, model, rep, variant in done:
        held.setdefault((scenario, model, rep), set()).add(variant)
    ours = list(dict.fromkeys(c.variant or own for c in cells))
    for cell in cells:
        mine = cell.variant or own
        others = held.get((cell.scenario.id, cell.model, cell.rep), set()) - {mine}
        if (cell.scenario.id, cell.model, cell.rep, mine) in done or not others & set(ours):
            continue
        first = {
            v: min((r for (_, _, r), vs in held.items() if v in vs), default=1 << 30) for v in ours
        }
        fitting = ",".join(sorted(ours, key=lambda v: first[v]))
        raise RefusedError(
            f"grid --resume: rep {cell.rep} of {cell.scenario.id} on {cell.model} is already "
            f"planned or recorded for variant {', '.join(sorted(others))}, and --variants "
            f"{','.join(ours)} gives it to {mine}; resume with the variants and order the grid "
            f"was started with (perhaps --variants {fitting})"
        )


def _planned_variants(
    plans: list[Plan], finals: list[EvidenceLine]
) -> dict[tuple[str, str, str, int], str]:
    """(run id, scenario, model, rep) -> the variant its plan meant it to run: named in the
    plan cell, else read from a rep the same run recorded of that scenario and model; left
    out when neither says (a plan from before variants)."""
    seen = {(x.run_id, x.scenario, x.model): _variant(x.declarations) for x in finals}
    found: dict[tuple[str, str, str, int], str] = {}
    for plan in plans:
        for cell in plan.cells:
            variant = cell.variant or seen.get((plan.run_id, cell.scenario, cell.model), "")
            for rep in cell.numbers():
                found[(plan.run_id, cell.scenario, cell.model, rep)] = variant
    return found


def validate_cells(ctx: RunContext, cells: list[GridCell]) -> None:
    """Every refusal the grid can meet, before its plan (run_cells calls it; so may a caller
    that wants to refuse before it shows anything)."""
    scenarios = list({c.scenario.id: c.scenario for c in cells}.values())
    limits = [c.timeout for c in cells if c.timeout is not None]
    fresh = [(ctx.run_id, c.scenario.id, c.model, c.rep) for c in cells if c.run_id is None]
    retries = [c.retries for c in cells if c.retries is not None]
    for run_id in sorted({c.run_id for c in cells if c.run_id is not None}):
        check_run_id(run_id)  # read back from plans.jsonl by --resume: input like any other
    validate_request(ctx, scenarios, sorted({c.model for c in cells}), limits, fresh, retries)


def _variant(declarations: dict[str, object]) -> str:
    return str(declarations.get("variant") or SUITE_VARIANT)


def _key(cell: GridCell, own: str) -> tuple[str, str, int, str]:
    """What names a rep across runs: a cell naming no variant runs the context's own."""
    return (cell.scenario.id, cell.model, cell.rep, cell.variant or own)


def plan_cells(cells: list[GridCell], own: str = "") -> list[PlanCell]:
    """The plan's cells; `own` names the variant of cells that name none (the context's)."""
    reps: dict[tuple[str, str, str, str], list[int]] = {}
    for c in cells:
        reps.setdefault((c.scenario.id, c.model, c.variant or own, c.cli), []).append(c.rep)
    return [
        PlanCell(
            scenario=s,
            model=m,
            reps=len(numbers),
            rep_numbers=[]
            if sorted(numbers) == list(range(1, len(numbers) + 1))
            else sorted(numbers),
            variant=v,
            cli=cli,
        )
        for (s, m, v, cli), numbers in reps.items()
    ]


def run_cells(
    ctx: RunContext,
    cells: list[GridCell],
    jobs: int,
    command: str,
    on_done: Callable[[RepOutcome], None] | None = None,
    plugins: list[Path] | None = None,
    inner_loop: bool = False,
) -> list[RepOutcome]:
    """Run cells on at most `jobs` reps at once; a cell naming a variant runs with that
    variant's subject (built once, with the same `--plugin` copies). Once ctx.stop is set,
    the reps in flight stop (each leaves an ERROR row) and no more start; the plan shows
    what is missing. Once the recorded cost estimate reaches ctx.max_cost_usd, no new rep
    starts either, and the reps left are written to the plan as skipped:budget. The grid
    holds the folder's grid lock throughout."""
    models = sorted({c.model for c in cells})
    preflight(ctx.suite, models, ctx.agent)
    validate_cells(ctx, cells)
    subjects = {
        v: build_subject(ctx.suite, plugins, v)
        for v in sorted({c.variant for c in cells if c.variant})
    }
    clis = resolve_versions(sorted({c.cli for c in cells if c.cli}))
    contexts: dict[tuple[str, str], RunContext] = {}
    for variant, version in {c.arm for c in cells}:
        changes: dict[str, Any] = {}
        if variant:
            changes["subject"] = subjects[variant]
        if version:
            cli = clis[version]
            changes.update(cli_path=cli.path, cli_integrity=cli.integrity, _cli_version=None)
        contexts[(variant, version)] = replace(ctx, **changes) if changes else ctx
    with ctx.records.hold_grid(command, ctx.notes):
        return _run_held(ctx, cells, jobs, command, models, on_done, contexts, inner_loop)


def _run_held(
    ctx: RunContext,
    cells: list[GridCell],
    jobs: int,
    command: str,
    models: list[str],
    on_done: Callable[[RepOutcome], None] | None,
    contexts: dict[tuple[str, str], RunContext],
    inner_loop: bool,
) -> list[RepOutcome]:
    ctx.check_records()
    if cells:
        prove_instrument(ctx, cells[0].scenario, models, run_scenario)
    fresh = [c for c in cells if c.run_id is None]
    for cell in cells:
        if cell.run_id is not None:
            for aside in ctx.records.set_aside(cell.run_id, cell.scenario.id, cell.model, cell.rep):
                ctx.notes.append(
                    f"set aside {ctx.records.relative(aside)}: claimed, never recorded"
                )
    if fresh:
        planned = plan_cells(fresh, ctx.the_subject().variant)
        record_plan(ctx, planned, command + run_options(ctx), inner_loop)
    if pipeline_enabled():
        done, skipped = _run_pipelined(ctx, cells, jobs, on_done, contexts)
    else:
        done, skipped = _run_pooled(ctx, cells, jobs, on_done, contexts)
    by_run: dict[str, list[GridCell]] = {}
    for cell in skipped:
        by_run.setdefault(cell.run_id or ctx.run_id, []).append(cell)
    for run_id, group in by_run.items():
        record_skipped(replace_run(ctx, run_id), plan_cells(group), SKIPPED_BUDGET)
    return done


def _run_pipelined(
    ctx: RunContext,
    cells: list[GridCell],
    jobs: int,
    on_done: Callable[[RepOutcome], None] | None,
    contexts: dict[tuple[str, str], RunContext],
) -> tuple[list[RepOutcome], list[GridCell]]:
    planned = [
        RepJob(contexts[c.arm], c.scenario, c.model, c.rep, c.timeout, c.run_id, c.retries,
               c.after)  # fmt: skip
        for c in cells
    ]
    cell_of = {id(job): cell for job, cell in zip(planned, cells, strict=True)}
    finished = run_jobs(STEPS, planned, jobs, ctx.stop, on_done, lambda job: not ctx.over_budget())
    return finished.done, [cell_of[id(job)] for job in finished.skipped]


def _run_pooled(
    ctx: RunContext,
    cells: list[GridCell],
    jobs: int,
    on_done: Callable[[RepOutcome], None] | None,
    contexts: dict[tuple[str, str], RunContext],
) -> tuple[list[RepOutcome], list[GridCell]]:
    """Each rep start to row on a pool of `jobs` threads (EVALKIT_PIPELINE=0)."""
    done: list[RepOutcome] = []
    skipped: list[GridCell] = []

    def work(cell: GridCell) -> RepOutcome | None:
        if ctx.over_budget():
            return None
        return run_rep(
            contexts[cell.arm],
            cell.scenario,
            cell.model,
            cell.rep,
            cell.timeout,
            cell.run_id,
            cell.retries,
            cell.after,
        )

    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="evalkit-rep")
    pending: dict[Future[RepOutcome | None], GridCell] = {pool.submit(work, c): c for c in cells}
    try:
        while pending:
            if ctx.stop.is_set():
                pending = {f: c for f, c in pending.items() if not f.cancel()}
            finished, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                cell = pending.pop(future)
                outcome = future.result()
                if outcome is None:
                    skipped.append(cell)
                    continue
                done.append(outcome)
                if on_done is not None:
                    on_done(outcome)
    except BaseException:
        ctx.stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return done, skipped


def replace_run(ctx: RunContext, run_id: str) -> RunContext:
    """The same context writing under another run id (a resumed plan's)."""
    if run_id == ctx.run_id:
        return ctx
    other = copy(ctx)
    other.run_id = run_id
    return other


def failed_rows(folder: Path) -> list[ResultRow]:
    """The rows an inner loop starts from (`--failing-from`): a folder that is not there, or
    holds no results, is refused rather than read as a grid with nothing left to run."""
    if not folder.is_dir():
        raise NotFoundError(f"--failing-from {folder}: no such results folder")
    results = folder.resolve() / "results.tsv"
    if not results.is_file():
        raise NotFoundError(f"--failing-from {folder}: holds no results.tsv")
    return read_rows(results)


def failing_cells(
    suite: Suite, rows: list[ResultRow], reps: int, controls: int = 1
) -> list[GridCell]:
    """The inner loop's reduced grid: every (scenario, model, variant) that FAILed in `rows`,
    plus up to `controls` passing scenarios per model x level, so a fix that breaks what
    worked shows up too. Scenarios no longer in the suite are left out."""
    outcome: dict[tuple[str, str, str], set[str]] = {}
    for row in rows:
        outcome.setdefault((row.scenario, row.model, row.variant), set()).add(row.verdict)
    known = {s.id: s for s in suite.scenarios("all")}
    failed = [k for k, seen in outcome.items() if "FAIL" in seen and k[0] in known]
    passed = [k for k, seen in outcome.items() if seen == {"PASS"} and k[0] in known]
    chosen = list(failed)
    taken: Counter[tuple[str, str, str | None]] = Counter()
    order = {s.id: i for i, s in enumerate(suite.scenarios("all"))}
    for key in sorted(passed, key=lambda k: (k[1], k[2], order[k[0]])):
        group = (key[1], key[2], known[key[0]].scenario.level)
        if taken[group] < controls:
            taken[group] += 1
            chosen.append(key)
    chosen.sort(key=lambda k: (order[k[0]], k[1], k[2]))
    siblings: dict[tuple[str, str], list[str]] = {}
    for s, m, v in chosen:
        siblings.setdefault((s, m), []).append(v)
    return [
        GridCell(
            known[s],
            m,
            variant_rep(rep, siblings[(s, m)].index(v), len(siblings[(s, m)])),
            variant="" if v in ("", SUITE_VARIANT) else v,
        )
        for s, m, v in chosen
        for rep in range(1, reps + 1)
    ]


def run_agents_grid(
    ctx: RunContext,
    agents: list[str],
    cells: list[GridCell],
    jobs: int,
    command: str,
    on_done: Callable[[RepOutcome], None] | None = None,
    plugins: list[Path] | None = None,
) -> list[RepOutcome]:
    """The same cells through each agent in turn (`grid --agents`), each agent's reps under a
    run id of their own, so rows of one scenario, model and rep never share a key. Refused
    before anything is planned when an agent is unknown or one of them cannot run a model."""
    from evalkit.run.prerequisites.credentials import require_credentials

    if len(set(agents)) != len(agents) or not agents:
        raise ConfigError("--agents names each agent once, e.g. claude,codex")
    models = sorted({c.model for c in cells})
    for agent in agents:
        check_agent(replace(ctx, agent=agent, _cli_version=None), models)
        require_credentials(models, agent=agent)
    done: list[RepOutcome] = []
    for index, agent in enumerate(agents):
        if ctx.stop.is_set():
            break
        run_id = ctx.run_id if index == 0 else new_run_id()
        each = replace(ctx, agent=agent, run_id=run_id, _cli_version=None)
        done += run_cells(each, cells, jobs, f"{command} --agent {agent}", on_done, plugins)
    return done

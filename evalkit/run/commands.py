"""The library calls behind `evalkit run` and `evalkit grid`: a request in, a result out.

Everything between parsing options and printing lives here, so a script gets what the
command line gets: the suite's lock checked, the context built, the cells chosen (a
`--failing-from` inner loop, a shard, a resume), every refusal before a plan, then the reps.
What a person should hear on the way is said through a `View`; the caller renders it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from evalkit.errors import ConfigError, RefusedError
from evalkit.run.context import RunContext, default_workdir, new_run_id, preflight
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT
from evalkit.run.grid import (
    GridCell,
    expand_cells,
    failed_rows,
    failing_cells,
    resume_cells,
    run_agents_grid,
    run_cells,
    validate_cells,
)
from evalkit.run.judges import judge_notice
from evalkit.run.prerequisites.cli_versions import chosen_cli, resolve, suite_pinned
from evalkit.run.rep import RepOutcome, reps_for
from evalkit.run.scripted import ScriptedModels
from evalkit.run.session import run_scenario
from evalkit.run.shard import grid_digest, parse_shard, shard_run_id, slice_cells, subject_hashes
from evalkit.suite.config import Suite
from evalkit.suite.lock import ensure_frozen
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import build_subject

OnDone = Callable[[RepOutcome], None]


class View(Protocol):
    """Where a run's words and progress go (the CLI: stdout, stderr and its progress bar)."""

    def say(self, line: str) -> None:
        """A line of the command's output."""
        ...

    def warn(self, line: str) -> None:
        """A line for the person waiting, beside the output."""
        ...

    def running(self, total: int) -> AbstractContextManager[OnDone]:
        """Held while `total` reps run; gives what is called with each recorded rep."""
        ...


class Quiet:
    """A view that says nothing."""

    def say(self, line: str) -> None:
        pass

    def warn(self, line: str) -> None:
        pass

    @contextmanager
    def running(self, total: int) -> Iterator[OnDone]:
        yield lambda done: None


@dataclass
class Limits:
    """What every rep of a run or grid is held to, and how it is driven."""

    timeout: float = DEFAULT_TIMEOUT
    judge_timeout: float = DEFAULT_JUDGE_TIMEOUT
    retry_errors: int = 0
    max_turns: int | None = None
    skip_preflight: bool = False
    unconfined: bool = False
    backend: str = ""
    allow_unfrozen: bool = False
    agent: str = "claude"
    plugins: list[Path] | None = None
    variant: str | None = None
    notify: Callable[[str], None] | None = None
    """Where a slow judge or a passed preflight says so."""
    scripted: ScriptedModels | None = None
    """The scripted models `policy:<name>` plays (the reference layer's `Policies`)."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Set by the caller (a signal) to stop: reps in flight end in ERROR rows."""


@dataclass
class RunRequest:
    """`evalkit run SCENARIO MODEL [WORKDIR]`: REPS fresh sessions of one scenario."""

    suite: Suite
    scenario: str
    model: str
    workdir: Path | None = None
    reps: int | None = None
    """None: the scenario's own count (a plugin eval case's `runs`), else one."""
    results: Path | None = None
    keep_sandboxes: bool = False
    reserve: bool = False
    cli: str | None = None
    limits: Limits = field(default_factory=Limits)


@dataclass
class Ran:
    """What a run or grid came to, for the caller to render."""

    ctx: RunContext
    done: list[RepOutcome]
    planned: int = 0
    """The reps this invocation meant to run (a grid's cells); 0: nothing was left to run."""

    @property
    def stopped(self) -> bool:
        return self.ctx.stop.is_set()

    @property
    def retried(self) -> int:
        return sum(1 for d in self.done if d.retried)

    @property
    def not_run(self) -> int:
        """Reps planned as skipped because the budget was reached (none after a stop)."""
        return 0 if self.stopped else max(0, self.planned - len(self.done))


def _context(
    suite: Suite, work: Path, results: Path, limits: Limits, allow_reserve: bool
) -> RunContext:
    return RunContext(
        suite=suite,
        workdir=work,
        results=results,
        run_id=new_run_id(),
        timeout=limits.timeout,
        stop=limits.stop,
        retry_errors=limits.retry_errors,
        max_turns=limits.max_turns,
        judge_timeout=limits.judge_timeout,
        notify=limits.notify,
        allow_reserve=allow_reserve,
        subject=build_subject(suite, limits.plugins, limits.variant),
        skip_preflight=limits.skip_preflight,
        unconfined=limits.unconfined,
        backend=limits.backend,
        agent=limits.agent,
        scripted=limits.scripted,
    )


def run_reps(request: RunRequest, view: View | None = None) -> Ran:
    """The reps of one scenario on one model, planned and recorded in WORKDIR."""
    view = view or Quiet()
    suite, limits = request.suite, request.limits
    chosen = suite.resolve(request.scenario)
    ensure_frozen(suite, limits.allow_unfrozen)
    work = (request.workdir or default_workdir(suite)).resolve()
    results = (request.results or work / "results.tsv").resolve()
    ctx = _context(suite, work, results, limits, request.reserve)
    ctx.keep_sandboxes = request.keep_sandboxes
    ctx.use_cli(chosen_cli(request.cli or ",".join(suite_pinned(suite, limits.agent))))
    reps = reps_for(chosen, request.reps)
    with view.running(reps) as on_done:
        done = run_scenario(ctx, chosen, request.model, reps, on_done)
    return Ran(ctx, done, reps)


@dataclass
class GridRequest:
    """`evalkit grid [WORKDIR]`: scenarios x models x reps on a bounded pool."""

    suite: Suite
    models: list[str]
    workdir: Path | None = None
    which: Literal["run", "reserve", "all"] = "run"
    scenarios: list[str] = field(default_factory=list)
    reps: int = 1
    jobs: int = 2
    resume: bool = False
    max_cost_usd: float | None = None
    shard: str | None = None
    run_id: str | None = None
    agents: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    clis: list[str] = field(default_factory=list)
    """--cli: the versions, in the order given; several are interleaved rep by rep."""
    failing_from: Path | None = None
    controls: int = 1
    command: str = "grid"
    """The command line the plan records."""
    limits: Limits = field(default_factory=Limits)


def run_grid(request: GridRequest, view: View | None = None) -> Ran:
    """Plan and run a grid (or resume one), holding the folder's grid lock throughout."""
    view = view or Quiet()
    ctx, cells = _grid_context(request, view)
    with ctx.records.hold_grid(request.command, ctx.notes):
        _say_notes(ctx, view)
        if request.resume:
            cells = _resumed(ctx, cells, view)
        if not cells:
            view.say("nothing to run")
            return Ran(ctx, [])
        validate_cells(ctx, cells)
        total = len(cells) * max(1, len(request.agents))
        with view.running(total) as on_done:
            done = _run_cells(request, ctx, cells, on_done)
    _say_notes(ctx, view)
    return Ran(ctx, done, len(cells))


def _grid_context(request: GridRequest, view: View) -> tuple[RunContext, list[GridCell]]:
    """The grid's context and cells, every check that needs no folder made first."""
    suite, limits, models = request.suite, request.limits, request.models
    if not models and request.failing_from is None:
        raise ConfigError("grid needs --models, e.g. --models sonnet,haiku")
    for name in request.variants:
        build_subject(suite, limits.plugins, name)  # a bad variant fails before anything runs
    clis = _default_clis(request)
    chosen = resolve(clis)  # an unknown or unfit version fails before anything runs
    pool = suite.scenarios(request.which)
    if request.scenarios:
        pool = [suite.resolve(ref, request.which) for ref in request.scenarios]
    if request.which != "run":
        view.warn("running the reserve set: this is a measurement")
    ensure_frozen(suite, limits.allow_unfrozen)
    preflight(suite, models)
    if (notice_line := judge_notice(suite, models)) is not None:
        view.warn(notice_line)
    work = (request.workdir or default_workdir(suite)).resolve()
    ctx = _context(suite, work, work / "results.tsv", limits, request.which != "run")
    ctx.max_cost_usd = request.max_cost_usd
    if len(clis) == 1:
        ctx.use_cli(chosen[clis[0]])
    cells = _cells(request, ctx, pool, view)
    if request.run_id is not None:
        ctx.run_id = request.run_id
    if request.shard is not None:
        cells = _shard(request, ctx, cells, view)
    return ctx, cells


def _default_clis(request: GridRequest) -> list[str]:
    """--cli's versions, else the suite's own pin of the grid's agent (`agents:`). A grid of
    several agents runs evalkit's pins: a suite pin of one of them is refused there, never
    dropped."""
    if request.clis:
        return request.clis
    if not request.agents:
        return suite_pinned(request.suite, request.limits.agent)
    pinned = [f"{a} {v}" for a in request.agents for v in suite_pinned(request.suite, a)]
    if pinned:
        raise RefusedError(
            f"{request.suite.config_path}: agents: pins {', '.join(pinned)}, which a grid of "
            "several --agents does not run; grid each --agent on its own"
        )
    return []


def _cells(
    request: GridRequest, ctx: RunContext, pool: list[ScenarioFile], view: View
) -> list[GridCell]:
    if request.failing_from is not None:
        found = failed_rows(request.failing_from)
        if request.models:
            found = [r for r in found if r.model in request.models]
        cells = failing_cells(ctx.suite, found, request.reps, request.controls)
        view.say(f"inner loop: {len(cells)} rep(s) of failed cells and controls")
        return cells
    several = request.clis if len(request.clis) > 1 else None
    return expand_cells(pool, request.models, request.reps, request.variants, several)


def _shard(
    request: GridRequest, ctx: RunContext, cells: list[GridCell], view: View
) -> list[GridCell]:
    """This shard's slice of the grid, under the run id every shard of it derives."""
    part = parse_shard(request.shard or "")
    settings = {"max_turns": request.limits.max_turns, "timeout": request.limits.timeout}
    subjects = subject_hashes(ctx.suite, cells, ctx.the_subject(), request.limits.plugins)
    digest = grid_digest(ctx.suite, cells, settings, subjects)
    ctx.run_id = request.run_id or shard_run_id(digest)
    ctx.plan_extra = {"grid_digest": digest, "shard": part.label, "grid_cells": len(cells)}
    total, cells = len(cells), slice_cells(cells, part)
    source = f" (from {part.source})" if part.source else ""
    view.say(
        f"shard {part.label}{source}: {len(cells)} of {total} rep(s), grid {digest}, "
        f"run id {ctx.run_id}"
    )
    return cells


def _resumed(ctx: RunContext, cells: list[GridCell], view: View) -> list[GridCell]:
    cells, problems = resume_cells(ctx, cells)
    for problem in problems:
        view.warn(f"skipped {problem}")
    adopted = sum(1 for c in cells if c.run_id is not None)
    again = sum(1 for c in cells if c.after)
    rerun = f", {again} of them interrupted before and run again" if again else ""
    view.say(f"resuming: {len(cells)} rep(s) left to run, {adopted} of them planned before{rerun}")
    return cells


def _run_cells(
    request: GridRequest, ctx: RunContext, cells: list[GridCell], on_done: OnDone
) -> list[RepOutcome]:
    plugins = request.limits.plugins
    if request.agents:
        return run_agents_grid(ctx, request.agents, cells, request.jobs, request.command,
                               on_done, plugins)  # fmt: skip
    inner = request.failing_from is not None
    return run_cells(ctx, cells, request.jobs, request.command, on_done, plugins, inner)


def _say_notes(ctx: RunContext, view: View) -> None:
    """Say, once, what the grid did besides reps (a lock taken over, a folder set aside)."""
    for note in ctx.notes:
        view.warn(f"note: {note}")
    ctx.notes.clear()

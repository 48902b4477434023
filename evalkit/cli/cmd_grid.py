"""`evalkit grid`: scenarios × models × reps on a bounded pool, resumable, with progress."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import Lines, command, rel, state
from evalkit.cli.options import (
    UNCONFINED_BANNER,
    AgentOption,
    Confine,
    JudgeTimeout,
    MaxTurns,
    RetryErrors,
    SkipPreflight,
    Unconfined,
    notice,
)
from evalkit.cli.subject_options import PluginOption, VariantOption
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from evalkit.cli.progress import RepProgress
    from evalkit.run.commands import OnDone, Ran


@command("grid", short_help="Run scenarios × models × reps, resumable, on a pool.")
def grid(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
    models: Annotated[
        str, typer.Option("--models", help="comma-separated, e.g. sonnet,haiku or `policy:<name>`")
    ] = "",
    which: Annotated[str, typer.Option("--set", help="run, reserve or all (both)")] = "run",
    scenarios: Annotated[str, typer.Option("--scenarios", help="comma-separated ids")] = "",
    reps: Annotated[int, typer.Option("--reps", min=1, help="fresh sessions per cell")] = 1,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="reps at once")] = 2,
    resume: Annotated[bool, typer.Option("--resume", help="skip reps already recorded")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds per rep")] = DEFAULT_TIMEOUT,
    allow_unfrozen: Annotated[
        bool, typer.Option("--allow-unfrozen", help="run although files differ from evalkit.lock")
    ] = False,
    retry_errors: RetryErrors = 0,
    max_turns: MaxTurns = None,
    judge_timeout: JudgeTimeout = DEFAULT_JUDGE_TIMEOUT,
    skip_preflight: SkipPreflight = False,
    max_cost_usd: Annotated[
        float | None,
        typer.Option(
            "--max-cost-usd",
            min=0,
            help="no new rep starts once the CLI's recorded cost estimate reaches this; "
            "the reps left are planned as skipped:budget",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="I/N: run only the I-th of N slices of this grid (auto/N reads "
            "JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or EVALKIT_SHARD_INDEX)",
        ),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="default: new; for shards, derived from the grid"),
    ] = None,
    plugin: PluginOption = None,
    variant: VariantOption = None,
    agent: AgentOption = "claude",
    agents: Annotated[
        str,
        typer.Option(
            "--agents",
            help="several agents, e.g. claude,codex: the same cells through each in turn, "
            "each under a run id of its own",
        ),
    ] = "",
    variants: Annotated[
        str, typer.Option("--variants", help="several variants, interleaved rep by rep")
    ] = "",
    cli: Annotated[
        str | None,
        typer.Option(
            "--cli",
            metavar="VERSION[,VERSION...]",
            help="Claude Code versions, interleaved rep by rep (default: the pinned one)",
        ),
    ] = None,
    failing_from: Annotated[
        Path | None,
        typer.Option(
            "--failing-from",
            help="inner loop: only the cells that FAILed in this results folder, plus controls",
        ),
    ] = None,
    controls: Annotated[
        int, typer.Option("--controls", min=0, help="passing controls per model x level")
    ] = 1,
    aa: Annotated[
        bool,
        typer.Option(
            "--aa",
            help="A/A: the suite's wording against a byte-identical copy (variant aa-copy), "
            "interleaved; doubles the reps, so a real model needs --max-cost-usd",
        ),
    ] = False,
    unconfined: Unconfined = False,
    confine: Confine = "",
) -> None:
    """Run a grid; its plan is written first, so anything missing can be counted.

    Example: `evalkit grid --models sonnet,haiku --reps 3 --jobs 4`, or
    `evalkit grid W2 --variants baseline,terse-skill --models sonnet`, or
    `evalkit grid W2 --failing-from W1 --reps 2`, or
    `evalkit grid --models policy:oracle --cli 2.1.327,2.1.328`
    """
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.commands import GridRequest, Limits, run_grid

    cli_list = _checked(which, resume, shard, run_id, agents, variant, variants, cli, failing_from)
    if aa:
        variants = _aa_variants(models, variant, variants, max_cost_usd)
    command = f"grid --models {models} --set {which}"
    command += f" --scenarios {scenarios}" if scenarios else ""
    command += f" --reps {reps}" + (f" --shard {shard}" if shard else "")
    command += " --resume" if resume else ""
    command += f" --variants {variants}" if variants else ""
    command += f" --cli {cli}" if cli else ""
    command += " --failing-from" if failing_from else ""
    limits = Limits(
        timeout=timeout, judge_timeout=judge_timeout, retry_errors=retry_errors,
        max_turns=max_turns, skip_preflight=skip_preflight, unconfined=unconfined,
        backend=confine,
        allow_unfrozen=allow_unfrozen, agent=agent, plugins=plugin, variant=variant,
        notify=notice, scripted=POLICIES,
    )  # fmt: skip
    request = GridRequest(
        suite=state.suite(), models=[m for m in models.split(",") if m], workdir=workdir,
        which=which,  # type: ignore[arg-type]
        scenarios=[ref for ref in scenarios.split(",") if ref], reps=reps, jobs=jobs,
        resume=resume, max_cost_usd=max_cost_usd, shard=shard, run_id=run_id,
        agents=agents.split(",") if agents else [],
        variants=variants.split(",") if variants else [], clis=cli_list,
        failing_from=failing_from, controls=controls, command=command, limits=limits,
    )  # fmt: skip
    screen = _Screen(unconfined, limits.stop)
    ran = run_grid(request, screen)
    if ran.planned:
        _say_outcome(ran, max_cost_usd, screen.bars[0])


def _aa_variants(
    models: str, variant: str | None, variants: str, max_cost_usd: float | None
) -> str:
    """The two arms of an A/A grid; refused beside other variants, and for a real model
    without a budget cap, since the grid runs every rep twice."""
    from evalkit.records.rows.policy_models import is_policy
    from evalkit.suite.subject import AA_VARIANT, SUITE_VARIANT

    if variant or variants:
        raise typer.BadParameter("--aa runs the suite's own wording twice; drop --variant(s)")
    real = [m for m in models.split(",") if m and not is_policy(m)]
    if real and max_cost_usd is None:
        raise typer.BadParameter(
            f"--aa doubles the reps of {', '.join(real)}: give --max-cost-usd to cap the spend"
        )
    return f"{SUITE_VARIANT},{AA_VARIANT}"


def _checked(
    which: str,
    resume: bool,
    shard: str | None,
    run_id: str | None,
    agents: str,
    variant: str | None,
    variants: str,
    cli: str | None,
    failing_from: Path | None,
) -> list[str]:
    """The options refused together, one line each; the CLI versions asked for."""
    if agents and (resume or shard or run_id):
        raise typer.BadParameter(
            "--agents runs a grid per agent; it takes no --resume, --shard or --run-id"
        )
    if which not in ("run", "reserve", "all"):
        raise typer.BadParameter("--set takes run, reserve or all")
    if variant and variants:
        raise typer.BadParameter("give --variant or --variants, not both")
    cli_list = [v.strip() for v in cli.split(",") if v.strip()] if cli else []
    if len(cli_list) > 1 and (resume or shard or failing_from):
        raise typer.BadParameter("several --cli versions run as a whole grid only")
    if cli:
        from evalkit.run.prerequisites.cli_versions import parse_versions

        cli_list = parse_versions(cli)
    return cli_list


class _Screen(Lines):
    """The grid's view: lines on stdout, warnings on stderr, a progress bar while it runs."""

    def __init__(self, unconfined: bool, stop: threading.Event) -> None:
        self.unconfined = unconfined
        self.stop = stop
        self.bars: list[RepProgress] = []

    @contextmanager
    def running(self, total: int) -> Iterator[OnDone]:
        from contextlib import ExitStack

        from evalkit.cli.app import err
        from evalkit.cli.interrupts import stop_on_signals
        from evalkit.cli.progress import rep_progress

        if self.unconfined:
            err.print(UNCONFINED_BANNER, style="bold red", markup=False)
        with ExitStack() as stack:
            stack.enter_context(stop_on_signals(self.stop))
            self.bars.append(stack.enter_context(rep_progress(total)))
            yield self.bars[0].done


def _say_outcome(ran: Ran, max_cost_usd: float | None, bar: RepProgress) -> None:
    """What the grid did beyond its rows: retries, pauses, budget, guarded paths, a stop."""
    from evalkit.cli.app import err, out

    ctx = ran.ctx
    if ran.retried:
        out.print(f"{ran.retried} rep(s) retried after an infrastructure error")
    if ctx.backoff.pauses:
        out.print(f"paused new reps {ctx.backoff.pauses} time(s) when the API asked to wait")
    if ran.not_run:
        err.print(
            f"budget: the cost estimate reached ${ctx.spent:.4f} of ${max_cost_usd:g}; "
            f"{ran.not_run} rep(s) not run, planned as skipped:budget"
        )
    for line in bar.guard_summary():
        err.print(f"guarded path changed: {line}", markup=False, style="bold")
    if ran.stopped:
        err.print(
            "interrupted: reps in flight were stopped and recorded as ERROR; "
            "`evalkit grid --resume` runs what is missing"
        )
        raise typer.Exit(130)
    out.print(f"rows in {rel(ctx.results)}; `evalkit report {rel(ctx.workdir)}` to read them")

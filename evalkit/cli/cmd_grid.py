"""`evalkit grid`: scenarios × models × reps on a bounded pool, resumable, with progress."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel, state
from evalkit.cli.options import (
    UNCONFINED_BANNER,
    AgentOption,
    JudgeTimeout,
    MaxTurns,
    RetryErrors,
    SkipPreflight,
    Unconfined,
    notice,
)
from evalkit.cli.subject_options import PluginOption, VariantOption
from evalkit.errors import ConfigError
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT


@command("grid")
def grid(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
    models: Annotated[
        str, typer.Option("--models", help="comma-separated, e.g. sonnet,haiku or `policy:<name>`")
    ] = "",
    which: Annotated[str, typer.Option("--set", help="run, reserve or all (both)")] = "run",
    scenarios: Annotated[str, typer.Option("--scenarios", help="comma-separated ids")] = "",
    reps: Annotated[int, typer.Option("--reps", min=1)] = 1,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="reps at once")] = 2,
    resume: Annotated[bool, typer.Option("--resume", help="skip reps already recorded")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds per rep")] = DEFAULT_TIMEOUT,
    allow_unfrozen: Annotated[bool, typer.Option("--allow-unfrozen")] = False,
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
    unconfined: Unconfined = False,
) -> None:
    """Run a grid; its plan is written first, so anything missing can be counted.

    Example: `evalkit grid --models sonnet,haiku --reps 3 --jobs 4`, or
    `evalkit grid W2 --variants baseline,terse-skill --models sonnet`, or
    `evalkit grid W2 --failing-from W1 --reps 2`, or
    `evalkit grid --models policy:oracle --cli 2.1.327,2.1.328`
    """
    from evalkit.cli.app import err, out
    from evalkit.cli.interrupts import stop_on_signals
    from evalkit.cli.progress import rep_progress
    from evalkit.records.run_ids import default_workdir, new_run_id
    from evalkit.run.cli_versions import parse_versions, resolve
    from evalkit.run.grid import (
        expand_cells,
        failed_rows,
        failing_cells,
        resume_cells,
        run_agents_grid,
        run_grid,
        validate_cells,
    )
    from evalkit.run.judges import judge_notice
    from evalkit.run.runner import RunContext, preflight
    from evalkit.suite.lock import ensure_frozen
    from evalkit.suite.subject import build_subject

    if agents and (resume or shard or run_id):
        raise typer.BadParameter(
            "--agents runs a grid per agent; it takes no --resume, --shard or --run-id"
        )
    if which not in ("run", "reserve", "all"):
        raise typer.BadParameter("--set takes run, reserve or all")
    if variant and variants:
        raise typer.BadParameter("give --variant or --variants, not both")
    model_list = [m for m in models.split(",") if m]
    if not model_list and failing_from is None:
        raise ConfigError("grid needs --models, e.g. --models sonnet,haiku")
    suite = state.suite()
    variant_list = variants.split(",") if variants else []
    for name in variant_list:
        build_subject(suite, plugin, name)  # a bad variant fails before anything runs
    cli_list = parse_versions(cli) if cli else []
    if len(cli_list) > 1 and (resume or shard or failing_from):
        raise typer.BadParameter("several --cli versions run as a whole grid only")
    chosen = resolve(cli_list)  # an unknown or unfit version fails before anything runs
    pool = suite.scenarios(which)  # type: ignore[arg-type]
    if scenarios:
        pool = [suite.resolve(ref, which) for ref in scenarios.split(",") if ref]  # type: ignore[arg-type]
    if which != "run":
        err.print("running the reserve set: this is a measurement")
    ensure_frozen(suite, allow_unfrozen)
    preflight(suite, model_list)
    if (notice_line := judge_notice(suite, model_list)) is not None:
        err.print(notice_line, markup=False)
    work = (workdir or default_workdir(suite)).resolve()
    ctx = RunContext(
        suite=suite,
        workdir=work,
        results=work / "results.tsv",
        run_id=new_run_id(),
        timeout=timeout,
        retry_errors=retry_errors,
        max_turns=max_turns,
        max_cost_usd=max_cost_usd,
        judge_timeout=judge_timeout,
        notify=notice,
        allow_reserve=which != "run",
        subject=build_subject(suite, plugin, variant),
        agent=agent,
        skip_preflight=skip_preflight,
        unconfined=unconfined,
    )
    if len(cli_list) == 1:
        ctx.use_cli(chosen[cli_list[0]])
    if failing_from is not None:
        found = failed_rows(failing_from)
        if model_list:
            found = [r for r in found if r.model in model_list]
        cells = failing_cells(suite, found, reps, controls)
        out.print(f"inner loop: {len(cells)} rep(s) of failed cells and controls")
    else:
        several = cli_list if len(cli_list) > 1 else None
        cells = expand_cells(pool, model_list, reps, variant_list, several)
    if run_id is not None:
        ctx.run_id = run_id
    if shard is not None:
        from evalkit.run.shard import (
            grid_digest,
            parse_shard,
            shard_run_id,
            slice_cells,
            subject_hashes,
        )

        part = parse_shard(shard)
        settings = {"max_turns": max_turns, "timeout": timeout}
        subjects = subject_hashes(suite, cells, ctx.the_subject(), plugin)
        digest = grid_digest(suite, cells, settings, subjects)
        ctx.run_id = run_id or shard_run_id(digest)
        ctx.plan_extra = {"grid_digest": digest, "shard": part.label, "grid_cells": len(cells)}
        total, cells = len(cells), slice_cells(cells, part)
        source = f" (from {part.source})" if part.source else ""
        out.print(
            f"shard {part.label}{source}: {len(cells)} of {total} rep(s), grid {digest}, "
            f"run id {ctx.run_id}"
        )
    command = f"grid --models {models} --set {which}"
    command += f" --scenarios {scenarios}" if scenarios else ""
    command += f" --reps {reps}" + (f" --shard {shard}" if shard else "")
    command += " --resume" if resume else ""
    command += f" --variants {variants}" if variants else ""
    command += f" --cli {cli}" if cli else ""
    command += " --failing-from" if failing_from else ""
    with ctx.records.hold_grid(command, ctx.notes):
        _say_notes(ctx.notes)
        if resume:
            cells, problems = resume_cells(ctx, cells)
            for problem in problems:
                err.print(f"skipped {problem}", markup=False)
            adopted = sum(1 for c in cells if c.run_id is not None)
            out.print(
                f"resuming: {len(cells)} rep(s) left to run, {adopted} of them planned before"
            )
        if not cells:
            out.print("nothing to run")
            return
        validate_cells(ctx, cells)
        if unconfined:
            err.print(UNCONFINED_BANNER, style="bold red", markup=False)
        with (
            stop_on_signals(ctx.stop),
            rep_progress(len(cells) * len(agents.split(",") if agents else [1])) as bar,
        ):
            if agents:
                done = run_agents_grid(
                    ctx, agents.split(","), cells, jobs, command, bar.done, plugin
                )
            else:
                done = run_grid(
                    ctx,
                    cells,
                    jobs,
                    command,
                    on_done=bar.done,
                    plugins=plugin,
                    inner_loop=failing_from is not None,
                )
    _say_notes(ctx.notes)
    retried = sum(1 for d in done if d.retried)
    if retried:
        out.print(f"{retried} rep(s) retried after an infrastructure error")
    if ctx.backoff.pauses:
        out.print(f"paused new reps {ctx.backoff.pauses} time(s) when the API asked to wait")
    if len(done) < len(cells) and not ctx.stop.is_set():
        err.print(
            f"budget: the cost estimate reached ${ctx.spent:.4f} of ${max_cost_usd:g}; "
            f"{len(cells) - len(done)} rep(s) not run, planned as skipped:budget"
        )
    for line in bar.guard_summary():
        err.print(f"guarded path changed: {line}", markup=False, style="bold")
    if ctx.stop.is_set():
        err.print(
            "interrupted: reps in flight were stopped and recorded as ERROR; "
            "`evalkit grid --resume` runs what is missing"
        )
        raise typer.Exit(130)
    out.print(f"rows in {rel(ctx.results)}; `evalkit report {rel(work)}` to read them")


def _say_notes(notes: list[str]) -> None:
    """Print, once, what the grid did besides reps (a lock taken over, a folder set aside)."""
    from evalkit.cli.app import err

    for note in notes:
        err.print(f"note: {note}", markup=False)
    notes.clear()

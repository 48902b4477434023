"""`evalkit run`: reps of one scenario on one model through the real Claude Code CLI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from evalkit.cli.subject_options import CliOption, PluginOption, VariantOption
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from evalkit.cli.progress import RepProgress


@command("run")
def run(
    scenario: Annotated[str, typer.Argument(help="scenario id or short id, e.g. P1")],
    model: Annotated[str, typer.Argument(help="a model for --model, or `policy:<name>`")],
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
    reps: Annotated[
        int | None,
        typer.Option("--reps", min=1, help="fresh sessions (default: the scenario's own, else 1)"),
    ] = None,
    results: Annotated[
        Path | None, typer.Option("--results", help="default: WORKDIR/results.tsv")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds per rep")] = DEFAULT_TIMEOUT,
    keep_sandboxes: Annotated[bool, typer.Option("--keep-sandboxes")] = False,
    reserve: Annotated[
        bool, typer.Option("--reserve", help="allow a reserve-set scenario (a measurement)")
    ] = False,
    allow_unfrozen: Annotated[
        bool, typer.Option("--allow-unfrozen", help="run although files differ from evalkit.lock")
    ] = False,
    retry_errors: RetryErrors = 0,
    max_turns: MaxTurns = None,
    judge_timeout: JudgeTimeout = DEFAULT_JUDGE_TIMEOUT,
    skip_preflight: SkipPreflight = False,
    plugin: PluginOption = None,
    variant: VariantOption = None,
    unconfined: Unconfined = False,
    cli: CliOption = None,
    agent: AgentOption = "claude",
) -> None:
    """Run REPS fresh sessions of SCENARIO on MODEL; append one row per rep.

    Example: `evalkit run P1 sonnet --reps 3` or `evalkit run N2 policy:oracle /tmp/w`
    or `evalkit run P1 sonnet --plugin ~/src/os-vault`
    """
    from evalkit.cli.app import err, out
    from evalkit.cli.interrupts import stop_on_signals
    from evalkit.run.cli_versions import chosen_cli
    from evalkit.run.runner import (
        RepOutcome,
        RunContext,
        default_workdir,
        new_run_id,
        reps_for,
        run_reps,
    )
    from evalkit.suite.lock import ensure_frozen
    from evalkit.suite.subject import build_subject

    suite = state.suite()
    chosen = suite.resolve(scenario)
    ensure_frozen(suite, allow_unfrozen)
    work = (workdir or default_workdir(suite)).resolve()
    ctx = RunContext(
        suite=suite,
        workdir=work,
        results=(results or work / "results.tsv").resolve(),
        run_id=new_run_id(),
        timeout=timeout,
        keep_sandboxes=keep_sandboxes,
        retry_errors=retry_errors,
        max_turns=max_turns,
        judge_timeout=judge_timeout,
        notify=notice,
        allow_reserve=reserve,
        subject=build_subject(suite, plugin, variant),
        skip_preflight=skip_preflight,
        unconfined=unconfined,
        agent=agent,
    )
    ctx.use_cli(chosen_cli(cli))
    reps = reps_for(chosen, reps)

    from contextlib import AbstractContextManager, nullcontext

    bar: AbstractContextManager[RepProgress | None]
    if reps > 1 and err.is_terminal:  # rich's progress bar is imported only to be shown
        from evalkit.cli.progress import rep_progress

        bar = rep_progress(reps)
    else:
        bar = nullcontext(None)
    if unconfined:
        err.print(UNCONFINED_BANNER, style="bold red", markup=False)
    with stop_on_signals(ctx.stop), bar as progress:
        # on one screen, rep lines go through the live bar's console so they print above it
        live = progress.progress if progress is not None else None
        printer = live.console if live is not None and out.is_terminal else out

        def show(done: RepOutcome) -> None:
            if done.breaches and progress is None:
                from evalkit.cli.progress import breach_message

                err.print(breach_message(done), style="bold red", markup=False)
            v = done.verdict
            retried = f" at attempt {done.attempt} (retried: {', '.join(done.retried)})"
            printer.print(
                f"{done.scenario} {done.model} rep {done.rep}: {v.verdict} {v.axis_a} "
                f"{v.axis_b} {done.row.reasons}  ({done.seconds:.1f}s)"
                + (retried if done.retried else ""),
                markup=False,
            )
            if done.kept is not None:
                printer.print(f"  sandbox kept at {done.kept}", markup=False)
            if progress is not None:
                progress.done(done)

        run_reps(ctx, chosen, model, reps, on_done=show)
    if ctx.stop.is_set():
        err.print("interrupted: the rep in flight was stopped and recorded as ERROR")
        raise typer.Exit(130)
    subject = ctx.the_subject()
    out.print(f"subject: {subject.variant} {subject.hash}")
    out.print(f"rows appended to {rel(ctx.results)}; evidence under {rel(work / 'evidence')}")

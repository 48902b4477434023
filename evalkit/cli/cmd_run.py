"""`evalkit run`: reps of one scenario on one model through the real Claude Code CLI."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import partial
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
from evalkit.cli.subject_options import CliOption, PluginOption, VariantOption
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from evalkit.cli.progress import RepProgress
    from evalkit.run.rep import RepOutcome


@command("run", short_help="Run one scenario on one model through the real CLI.")
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
    keep_sandboxes: Annotated[
        bool, typer.Option("--keep-sandboxes", help="keep each rep's sandbox folder after scoring")
    ] = False,
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
    confine: Confine = "",
    cli: CliOption = None,
    agent: AgentOption = "claude",
) -> None:
    """Run REPS fresh sessions of SCENARIO on MODEL; append one row per rep.

    Example: `evalkit run P1 sonnet --reps 3` or `evalkit run N2 policy:oracle /tmp/w`
    or `evalkit run P1 sonnet --plugin ~/src/os-vault`
    """
    from evalkit.cli.app import err, out
    from evalkit.cli.interrupts import stop_on_signals
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.commands import Limits, OnDone, RunRequest, run_reps

    limits = Limits(
        timeout=timeout, judge_timeout=judge_timeout, retry_errors=retry_errors,
        max_turns=max_turns, skip_preflight=skip_preflight, unconfined=unconfined,
        backend=confine,
        allow_unfrozen=allow_unfrozen, agent=agent, plugins=plugin, variant=variant,
        notify=notice, scripted=POLICIES,
    )  # fmt: skip
    request = RunRequest(
        suite=state.suite(), scenario=scenario, model=model, workdir=workdir, reps=reps,
        results=results, keep_sandboxes=keep_sandboxes, reserve=reserve, cli=cli, limits=limits,
    )  # fmt: skip

    class Screen(Lines):
        @contextmanager
        def running(self, total: int) -> Iterator[OnDone]:
            bar: AbstractContextManager[RepProgress | None]
            if total > 1 and err.is_terminal:  # rich's progress bar is imported only to be shown
                from evalkit.cli.progress import rep_progress

                bar = rep_progress(total)
            else:
                bar = nullcontext(None)
            if unconfined:
                err.print(UNCONFINED_BANNER, style="bold red", markup=False)
            with stop_on_signals(limits.stop), bar as progress:
                yield partial(_show, progress)

    ran = run_reps(request, Screen())
    if ran.stopped:
        err.print("interrupted: the rep in flight was stopped and recorded as ERROR")
        raise typer.Exit(130)
    subject = ran.ctx.the_subject()
    out.print(f"subject: {subject.variant} {subject.hash}")
    work = ran.ctx.workdir
    out.print(f"rows appended to {rel(ran.ctx.results)}; evidence under {rel(work / 'evidence')}")


def _show(progress: RepProgress | None, done: RepOutcome) -> None:
    """One rep's line; on one screen it goes through the live bar's console, above the bar."""
    from evalkit.cli.app import err, out

    live = progress.progress if progress is not None else None
    printer = live.console if live is not None and out.is_terminal else out
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

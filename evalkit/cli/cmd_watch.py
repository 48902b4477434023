"""`evalkit watch`: the newest release of an agent's CLI gated against its pin."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import Lines, command, state
from evalkit.cli.options import AgentOption, Confine, notice

if TYPE_CHECKING:
    from evalkit.loops.watch import Watched
    from evalkit.run.commands import OnDone


@command("watch", short_help="Gate a new release of an agent's CLI against its pin.")
def watch_command(
    workdir: Annotated[
        Path | None, typer.Argument(help="cursor and grids (default: results/watch/)")
    ] = None,
    agent: AgentOption = "claude",
    models: Annotated[
        str, typer.Option("--models", help="comma-separated, e.g. sonnet or `policy:<name>`")
    ] = "",
    which: Annotated[str, typer.Option("--set", help="run, reserve or all (both)")] = "run",
    scenarios: Annotated[str, typer.Option("--scenarios", help="comma-separated ids")] = "",
    reps: Annotated[int, typer.Option("--reps", min=1, help="fresh sessions per cell")] = 1,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="reps at once")] = 2,
    registry: Annotated[
        str | None, typer.Option("--registry", metavar="URL", help="passed to npm")
    ] = None,
    pins: Annotated[
        Path | None,
        typer.Option(
            "--pins",
            metavar="FILE",
            help="a TOML file whose [agents] table holds the pin to watch and bump "
            "(default: the suite's agents: block, else evalkit's own pin)",
        ),
    ] = None,
    bump: Annotated[
        bool,
        typer.Option("--bump", help="on exit 0, move the pin to the release; print the diff"),
    ] = False,
    confine: Confine = "",
) -> None:
    """Ask npm for releases of AGENT's CLI newer than its pin (pre-releases skipped) and run
    the newest against the pin: a grid of both versions interleaved, then the gate's paired
    test of cli:PIN against cli:NEW. Exit 0 when there is no new release or it holds, 1 when
    it is worse, 2 when the run cannot be trusted or the release not installed, 3 when this
    size cannot tell. WORKDIR keeps watch-cursor.json: a release is tested once, unless it
    came to 2 (retried) or to 3 at fewer --reps.

    Example: `evalkit watch --agent claude --models policy:oracle --set all --bump`
    """
    from evalkit.loops.watch import WatchRequest, watch
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.commands import Limits

    if which not in ("run", "reserve", "all"):
        raise typer.BadParameter("--set takes run, reserve or all")
    limits = Limits(agent=agent, backend=confine, notify=notice, scripted=POLICIES)
    request = WatchRequest(
        suite=state.suite(), agent=agent, models=[m for m in models.split(",") if m],
        workdir=workdir, which=which,  # type: ignore[arg-type]
        scenarios=[s for s in scenarios.split(",") if s], reps=reps, jobs=jobs,
        registry=registry, pins=pins, bump=bump, limits=limits,
    )  # fmt: skip
    done = watch(request, _Screen(limits.stop))
    _say(done)
    raise typer.Exit(done.code)


def _say(done: Watched) -> None:
    from evalkit.ci.github import append_summary
    from evalkit.cli.app import out
    from evalkit.compare.gate_render import to_markdown
    from evalkit.loops.watch import shown

    if done.verdict is not None:
        append_summary(to_markdown(done.verdict))
        out.print(done.verdict.line, markup=False)
    if done.newest is not None:
        out.print(f"watch: {done.pin.agent} {done.newest} against {done.pin.version}: "
                  f"{done.outcome} (exit {done.code})", markup=False)  # fmt: skip
    if done.diff:
        out.print(done.diff, markup=False, end="")
        out.print(f"bumped {done.pin.agent} to {done.newest} in {shown(done.pin.path)}",
                  markup=False)  # fmt: skip


class _Screen(Lines):
    """Lines on stdout, warnings on stderr, a progress bar while the grid runs."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    @contextmanager
    def running(self, total: int) -> Iterator[OnDone]:
        from contextlib import ExitStack

        from evalkit.cli.interrupts import stop_on_signals
        from evalkit.cli.progress import rep_progress

        with ExitStack() as stack:
            stack.enter_context(stop_on_signals(self.stop))
            yield stack.enter_context(rep_progress(total)).done

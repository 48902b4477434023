"""`evalkit tune`: the wording loop run by evalkit, decided on the run set, confirmed once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import Lines, command, state
from evalkit.cli.options import AgentOption, Confine, Unconfined, notice

if TYPE_CHECKING:
    from evalkit.run.commands import OnDone
    from evalkit.tune.loop import Tuned


@command("tune", short_help="Let a proposer tune the wording; the reserve confirms it.")
def tune_command(
    workdir: Annotated[Path, typer.Argument(help="grids, briefs, tune.jsonl and the patch")],
    models: Annotated[
        str, typer.Option("--models", help="comma-separated, e.g. sonnet or `policy:<name>`")
    ] = "",
    reps: Annotated[int, typer.Option("--reps", min=1, help="fresh sessions per cell")] = 2,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="proposals at most")] = 6,
    budget_reps: Annotated[
        int | None, typer.Option("--budget-reps", min=1, help="hard cap on reps, all grids")
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", min=0, help="hard cap on the CLI's cost")
    ] = None,
    proposer_cmd: Annotated[
        str | None,
        typer.Option(
            "--proposer-cmd",
            metavar="CMD",
            help="run confined as `sh -c CMD` in a copy of the best wording; "
            "$TUNE_BRIEF names the brief, $TUNE_ROUND the round",
        ),
    ] = None,  # fmt: skip
    proposer: Annotated[
        str | None,
        typer.Option(
            "--proposer",
            metavar="AGENT:MODEL",
            help="an agent run like a rep, confined, the brief as its prompt, one rep a round "
            "(default: the suite's agent with the judge's model); claude:policy:propose:PLAN "
            "plays a scripted one",
        ),
    ] = None,  # fmt: skip
    paths: Annotated[
        str,
        typer.Option(
            "--paths",
            help="comma-separated subject paths the proposer may "
            "change (default: the suite's subject)",
        ),
    ] = "",  # fmt: skip
    margin: Annotated[
        float, typer.Option("--margin", min=0, help="the other polarity may fall this much")
    ] = 0.1,
    min_delta: Annotated[
        float, typer.Option("--min-delta", min=0, help="better by more than this to accept")
    ] = 0.0,
    controls: Annotated[
        int, typer.Option("--controls", min=0, help="passing controls per model and level")
    ] = 1,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="reps at once")] = 2,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the plan and its worst case; run nothing")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", metavar="OUT", help="the trajectory page, at the end")
    ] = None,
    reserve_again: Annotated[
        bool, typer.Option("--reserve-again", help="confirm on a reserve a tune already spent")
    ] = False,
    agent: AgentOption = "claude",
    unconfined: Unconfined = False,
    confine: Confine = "",
) -> None:
    """Tune the subject's wording: the baseline runs the run set, then each round a proposer
    edits a copy of the best wording from a brief of the failing cells (never a Task), the
    variant tune-N runs the inner loop and the run set, and is accepted when it is shown
    better on the failing polarity and within --margin on the other. The run set is recorded
    contaminated at the first proposal. After an acceptance the baseline and the best
    variant run once on the reserve, interleaved, which is then recorded contaminated. Exit
    0 the reserve confirms, 1 worse (or the run set degraded), 2 untrusted, 3 cannot tell
    (or nothing was accepted). Refused before any rep when a set is too small to decide.

    Example: `evalkit tune results/tune --models sonnet --proposer claude:sonnet
    --budget-usd 20`, or offline `evalkit tune results/tune --models
    policy:phrase:outlives+the+task --proposer-cmd ./propose.sh --budget-reps 400`
    """
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.commands import Limits
    from evalkit.tune.loop import tune
    from evalkit.tune.plan import TuneRequest

    limits = Limits(agent=agent, backend=confine, unconfined=unconfined, notify=notice,
                    scripted=POLICIES)  # fmt: skip
    request = TuneRequest(
        suite=state.suite(), workdir=workdir, models=[m for m in models.split(",") if m],
        reps=reps, rounds=rounds, budget_reps=budget_reps, budget_usd=budget_usd,
        proposer_cmd=proposer_cmd, proposer=proposer,
        paths=[p for p in paths.split(",") if p], margin=margin, min_delta=min_delta,
        controls=controls, jobs=jobs, dry_run=dry_run, reserve_again=reserve_again, html=html,
        limits=limits,
    )  # fmt: skip
    done = tune(request, _Screen(limits.stop))
    _say(done)
    raise typer.Exit(done.code)


def _say(done: Tuned) -> None:
    from evalkit.cli.app import out

    def say(line: str) -> None:
        out.print(line, markup=False)

    if not done.tune_id:
        for line in done.plan.lines():
            say(line)
        say(f"tune: {done.stop}")
        return
    accepted = sum(1 for r in done.rounds if r.decision == "accepted")
    say(f"tune: {done.tune_id}: {len(done.rounds)} round(s), {accepted} accepted; stopped: "
        f"{done.stop}; best {done.best}; {done.spent_reps} rep(s), "
        f"${done.spent_usd:.4f}")  # fmt: skip
    if done.reserve is not None:
        words = {0: "confirmed", 1: "worse", 2: "untrusted", 3: "cannot tell"}
        say(f"tune: reserve: {words[done.reserve.code]}: {done.reserve.reason}")
    else:
        say("tune: the reserve was not run and stays held")
    if done.patch is not None:
        say(f"tune: the wording's change is in {done.patch}")
    if done.page is not None:
        say(f"tune: the trajectory page is {done.page}")
    say(f"tune: exit {done.code}")


class _Screen(Lines):
    """Lines on stdout, warnings on stderr, a progress bar while each grid runs."""

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

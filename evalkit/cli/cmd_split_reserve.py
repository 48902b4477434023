"""`evalkit suite split-reserve`: a seeded share of the run set becomes the reserve."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import moved_command, rel, state, suite_app


@moved_command(
    suite_app, "split-reserve", short_help="Move a seeded share of the run set into the reserve."
)
def split_reserve_command(
    share: Annotated[float, typer.Option("--share", help="share of the cases moved")] = 0.3,
    seed: Annotated[
        int | None, typer.Option("--seed", help="random seed (default: a fresh one, printed)")
    ] = None,
) -> None:
    """Move a seeded random share of the run set's cases into the reserve, which run then
    refuses without --reserve. A plugin's eval cases are its author's: their reserve is
    untuned-against, not unseen. Refused on a frozen suite (moving a case changes the
    instrument: remove the lock, split, freeze again).

    Example: `evalkit suite split-reserve --share 0.3 --seed 7`
    """
    from evalkit.cli.app import out
    from evalkit.suite.split_reserve import split_reserve

    done = split_reserve(state.suite_arg, share, seed)
    out.print(
        f"moved {len(done.moved)} case(s) into {rel(Path(done.reserve))} (seed {done.seed}); "
        f"{done.kept} stay in the run set: {', '.join(done.moved)}"
    )

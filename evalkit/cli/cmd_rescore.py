"""`evalkit results rescore`: rows scored by older scoring code, scored again beside the old
rows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import moved_command, results_app, state


@moved_command(
    results_app, "rescore", short_help="Score reps of older scoring code again with the current."
)
def rescore(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
) -> None:
    """Score every rep that older scoring code scored again with the current code, from its
    kept evidence; new rows go beside the old ones, never over them.

    Exits 1 when a rep could not be re-scored (its evidence was edited, or its fixture or
    scenario changed since).

    Example: `evalkit results rescore results/`
    """
    from evalkit.cli.app import err, out
    from evalkit.records.folder.run_ids import default_workdir
    from evalkit.records.folder.workdir import Workdir
    from evalkit.records.rescore import rescore_workdir

    suite = state.suite()
    done = rescore_workdir(suite, Workdir(workdir or default_workdir(suite)))
    for line in done.rescored:
        out.print(f"  rescored  {line}", markup=False)
    for line in done.refused:
        out.print(f"  REFUSED   {line}", markup=False)
    if not done.rescored and not done.refused:
        out.print("nothing to re-score: every rep was scored by the current scoring code")
    else:
        out.print(
            f"{len(done.rescored)} rep(s) re-scored under run id(s) {', '.join(done.run_ids)}"
        )
    if done.refused:
        err.print(f"rescore: {len(done.refused)} rep(s) not re-scored")
        raise typer.Exit(1)

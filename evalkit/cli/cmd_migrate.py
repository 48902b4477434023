"""`evalkit results migrate`: a results folder's files rewritten with the current columns."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import moved_command, rel, results_app, state


@moved_command(
    results_app, "migrate", short_help="Rewrite an older results folder with current columns."
)
def migrate(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
) -> None:
    """Rewrite WORKDIR's results files written by an older evalkit with the current columns.

    Each changed file keeps a backup beside it (FILE.bak-<time>); every row is read back and
    held against the old one before the new file stays.

    Example: `evalkit results migrate results/`
    """
    from evalkit.cli.app import out
    from evalkit.records.folder.migrate import migrate_workdir
    from evalkit.records.folder.run_ids import default_workdir
    from evalkit.records.folder.workdir import Workdir

    records = Workdir(workdir or default_workdir(state.suite()))
    for done in migrate_workdir(records):
        if not done.changed:
            out.print(f"{rel(done.path)}: already current", markup=False)
            continue
        added = ", ".join(done.added) or "none"
        kept = (
            f"; {done.kept_lines} unreadable line(s) kept as they were" if done.kept_lines else ""
        )
        out.print(
            f"{rel(done.path)}: {done.rows} row(s) rewritten, columns added: {added}{kept}; "
            f"backup {rel(done.backup or done.path)}",
            markup=False,
        )

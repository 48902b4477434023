"""`evalkit import`: another tool's eval log read into a results folder labelled imported."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import app, group_command, state

import_app = typer.Typer(
    name="import",
    help="Read another tool's eval log into a results folder, labelled imported: `report` and "
    "`compare` read it, nothing re-derives it, so it is never PUBLISHABLE and `gate` refuses it.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(import_app, name="import", short_help="Read another tool's eval log as results.")


@group_command(import_app, "inspect", short_help="Read an Inspect AI .eval log as results.")
def import_inspect(
    log: Annotated[Path, typer.Argument(metavar="LOG", help="the Inspect AI log (.eval)")],
    polarity_key: Annotated[
        str,
        typer.Option(
            "--polarity-key",
            metavar="KEY",
            help="the sample metadata key holding each sample's polarity: positive or negative",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", metavar="FOLDER", help="the results folder to write; must be new"),
    ],
) -> None:
    """One row per sample: its id the scenario, its epoch the rep, PASS or FAIL from its
    `verdict` score (or its only score), ERROR when it errored; its polarity from the metadata
    key KEY (a sample lacking it, or the suite stating another, is refused). One log is one
    model's. The folder is read-only, holds no evidence and is labelled imported.

    Example: `evalkit import inspect logs/run.eval --polarity-key polarity --out results/inspect`
    """
    import sys

    from evalkit.exports.inspect_import import import_inspect_log

    done = import_inspect_log(state.suite(), log, polarity_key, out)
    errors = f", {done.errors} ERROR" if done.errors else ""
    print(
        f"wrote {out}: {done.rows} row(s) of {done.model} over {done.scenarios} scenario(s)"
        f"{errors}; imported, never PUBLISHABLE",
        file=sys.stderr,
    )

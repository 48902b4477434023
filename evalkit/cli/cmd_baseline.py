"""`evalkit suite baseline`: the verified results folder `compare` measures against by default."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import moved_command, rel, state, suite_app

if TYPE_CHECKING:
    from evalkit.suite.lock import Baseline


@moved_command(
    suite_app, "baseline", short_help="Record a verified results folder as the one to beat."
)
def baseline_command(
    workdir: Annotated[
        Path | None,
        typer.Argument(
            help="a PUBLISHABLE results folder of this suite; omit to show the baseline"
        ),
    ] = None,
    variant: Annotated[
        str | None,
        typer.Option("--variant", help="the variant to take, when the folder holds several"),
    ] = None,
    clear: Annotated[bool, typer.Option("--clear", help="remove the recorded baseline")] = False,
    replace: Annotated[
        bool, typer.Option("--replace", help="record WORKDIR in place of the recorded baseline")
    ] = False,
) -> None:
    """Record a results folder as the suite's baseline, which `compare B` takes as A. It must
    verify PUBLISHABLE and hold this suite's reps only; it is recorded in evalkit.lock beside
    the frozen hashes, so recording one never makes a run refuse.

    A recorded baseline is replaced only with --replace.

    Example: `evalkit suite baseline results/base`, `evalkit suite baseline`,
    `evalkit suite baseline --clear`
    """
    from evalkit.cli.app import out
    from evalkit.compare.baseline import RECORD_HINT, set_baseline
    from evalkit.suite.lock import lock_path, read_lock, record_baseline

    if clear and (workdir is not None or variant is not None or replace):
        raise typer.BadParameter("--clear takes no folder, --variant or --replace")
    suite = state.suite()
    where = rel(lock_path(suite))
    if clear:
        lock = read_lock(suite)
        if lock is None or lock.baseline is None:
            out.print("no baseline was recorded")
            return
        record_baseline(suite, None)
        out.print(f"baseline {lock.baseline.workdir} cleared from {where}")
        return
    if workdir is None:
        if variant is not None or replace:
            raise typer.BadParameter("--variant and --replace need a folder")
        lock = read_lock(suite)
        if lock is None or lock.baseline is None:
            out.print(f"no baseline recorded; {RECORD_HINT}", markup=False)
            return
        _show(lock.baseline)
        return
    chosen = set_baseline(suite, workdir, variant, replace)
    out.print(f"recorded the baseline in {where}:", markup=False)
    _show(chosen)


def _show(baseline: Baseline) -> None:
    from evalkit.cli.app import out

    for name, value in (
        ("folder", baseline.workdir),
        ("variant", baseline.variant),
        ("rows", str(baseline.rows)),
        ("models", ", ".join(baseline.models)),
        ("subject", ", ".join(baseline.subject_hashes)),
        ("bundle ids", ", ".join(baseline.bundle_ids)),
        ("recorded", baseline.date),
    ):
        out.print(f"  {name}: {value}", markup=False)

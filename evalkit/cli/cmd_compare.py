"""`evalkit compare`: B against A, cell by cell, with how much the design could show."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.cli.options import (
    AllowBackends,
    FirstFolder,
    Format,
    SecondFolder,
    SideA,
    SideB,
    Wide,
)
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit.compare.compare import Comparison


@command("compare", short_help="Compare two results folders cell by cell.")
def compare_command(
    first: FirstFolder,
    second: SecondFolder = None,
    a: SideA = "",
    b: SideB = "",
    allow_confounded: Annotated[
        bool, typer.Option("--allow-confounded", help="compare although several factors differ")
    ] = False,
    fmt: Annotated[Format, typer.Option("--format", help="table, markdown or json")] = (
        Format.table
    ),
    min_delta: Annotated[
        float | None,
        typer.Option(
            "--min-delta",
            min=0.0,
            max=1.0,
            help="also test 'B better than A by more than D' per paired cell",
        ),
    ] = None,
    new_reps: Annotated[
        int | None,
        typer.Option(
            "--new-reps",
            min=1,
            help="the reps a side the next grid may add (default: as many as now)",
        ),
    ] = None,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential", help="also the anytime-valid p: look after every rep, stop any time"
        ),
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="OUT",
            help="also write a forest plot page to OUT: one row per cell, B-A with its interval",
        ),
    ] = None,
    wide: Wide = False,
    allow_backends: AllowBackends = False,
) -> None:
    """Compare B with A per set, level and polarity: per-rep Fisher and Newcombe, per-scenario
    sign-flip test, and what the current n could detect. Given one folder and no --a, A is
    the suite's baseline (`evalkit suite baseline`).

    Example: `evalkit compare results/terse` (against the baseline),
    `evalkit compare results/base results/terse` or
    `evalkit compare results/ --a variant:baseline --b variant:terse-skill`,
    `evalkit compare results/terse --html compare.html`
    """
    from evalkit.compare.baseline import baseline_side
    from evalkit.compare.compare import compare
    from evalkit.compare.render import to_markdown
    from evalkit.compare.sides import load_side

    if second is None and a and not b:
        raise ConfigError("compare: --a within one folder needs --b too")
    suite = state.suite()
    if second is None and not a:
        side_a = baseline_side(suite)
    else:
        side_a = load_side("A", first, a)
    side_b = load_side("B", second or first, b)
    if html is not None:
        from evalkit.compare.forest import check_forest_target

        check_forest_target(suite, [side_a.workdir, side_b.workdir], html)
    built = compare(
        suite, side_a, side_b, allow_confounded, min_delta, new_reps, sequential, allow_backends
    )
    if html is not None:
        from rich.text import Text

        from evalkit.cli.app import err
        from evalkit.compare.forest import write_forest

        drawn = write_forest(suite, built, [side_a.workdir, side_b.workdir], html)
        err.print(Text(f"wrote {html}: {drawn} cell(s)"))
    if fmt is Format.json:
        print(built.model_dump_json(indent=2))
    elif fmt is Format.markdown:
        print(to_markdown(built), end="")
    else:
        _print_table(built, wide)


def _print_table(built: Comparison, wide: bool) -> None:
    from rich.text import Text

    from evalkit.cli.app import out
    from evalkit.cli.fit import print_fitted, print_wide
    from evalkit.compare.render import (
        COLUMNS,
        COMPACT_COLUMNS,
        COMPACT_LEGEND,
        LEGEND,
        after_lines,
        compact_rows,
        entry_row,
        side_line,
    )

    out.print(Text(f"evalkit compare: {built.suite}"))
    out.print(Text(side_line("A", built.a)))
    out.print(Text(side_line("B", built.b)))
    for note in built.notes:
        out.print(Text(note, style="bold red" if note.startswith("CONFOUNDED") else ""))
    out.print()
    if wide:
        rows = [list(entry_row(entry)) for entry in built.comparisons]
        print_wide(out, "", COLUMNS, rows)
        notes: list[str] = []
        legend = LEGEND
    else:
        rows, notes = compact_rows(built)
        print_fitted(out, "", COMPACT_COLUMNS, rows)
        legend = COMPACT_LEGEND
    for line in [*notes, *after_lines(built)]:
        out.print(Text(line))
    out.print(Text(legend, style="dim"))

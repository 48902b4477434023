"""`evalkit report`: rates with intervals, the gaps, and whether a results folder is publishable."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from evalkit.cli.app import command, err, out, rel, state
from evalkit.records.report import (
    LEVEL_COLUMNS,
    MODEL_COLUMNS,
    SETS,
    USAGE_COLUMNS,
    Report,
    build_report,
    level_rows,
    level_title,
    missing_lines,
    model_rows,
    retry_line,
    to_markdown,
    unknown_lines,
    usage_rows,
)
from evalkit.run.runner import default_workdir


class Format(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


@command("report")
def report(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, markdown or json")] = (
        Format.table
    ),
    html: Annotated[
        Path | None,
        typer.Option("--html", help="also write a self-contained page with every rep's evidence"),
    ] = None,
    evidence: Annotated[
        str,
        typer.Option(
            "--evidence",
            help="with --html: inline (one file), files (OUT.files/ beside it) or auto",
        ),
    ] = "auto",
) -> None:
    """PASS k/n with Wilson 95% intervals per level, model and polarity; what is missing;
    whether the folder is publishable.

    Example: `evalkit report results/ --format markdown`, `evalkit report results/ --html r.html`
    """
    suite = state.suite()
    work = (workdir or default_workdir(suite)).resolve()
    built = build_report(suite, work)
    if html is not None:
        from evalkit.records.html_report import parse_placement, write_html

        stats = write_html(suite, work, html, parse_placement(evidence), report=built)
        where = f" and {rel(stats.sibling_dir)}/" if stats.sibling_dir else ""
        err.print(
            Text(
                f"wrote {rel(stats.path)}{where}: {stats.reps} rep(s), "
                f"{stats.masked_lines} line(s) masked as task text"
            )
        )
    if fmt is Format.json:
        print(built.model_dump_json(indent=2))
    elif fmt is Format.markdown:
        print(to_markdown(built), end="")
    else:
        _print_tables(built)


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=Text(title), title_justify="left")
    for column in columns:
        table.add_column(Text(column))
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _print_tables(built: Report) -> None:
    out.print(Text(f"evalkit report: {built.suite} - {built.rows} row(s) from {built.workdir}"))
    out.print(Text(", ".join(f"{which} set: {label}" for which, label in built.sets.items())))
    if built.incomplete:
        out.print(Text("INCOMPLETE", style="bold red"))
        for line in missing_lines(built):
            out.print(Text(f"  {line}"))
    for level in built.levels:
        out.print(_table(level_title(level), LEVEL_COLUMNS, level_rows(level)))
    for which in SETS:
        rows = model_rows(built, which)
        if rows:
            title = f"Per model - {which} set ({built.sets[which]})"
            out.print(_table(title, MODEL_COLUMNS, rows))
    if built.usage:
        out.print(_table("Usage (all attempts)", USAGE_COLUMNS, usage_rows(built)))
    if retry_line(built):
        out.print(Text(retry_line(built)))
    if built.unknown:
        out.print(Text("Unknown scenarios (no longer in the suite)", style="bold"))
        for line in unknown_lines(built):
            out.print(Text(f"  {line}"))
    verdict = built.publishability
    out.print(Text(verdict.verdict, style="bold green" if verdict.publishable else "bold red"))

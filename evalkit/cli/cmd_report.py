"""`evalkit report`: rates with intervals, the gaps, and whether a results folder is publishable."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel, state


class Format(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


@command("report", short_help="Pass rates with intervals, and whether it is publishable.")
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
    junit: Annotated[
        Path | None, typer.Option("--junit", help="also write JUnit XML for the CI to FILE")
    ] = None,
) -> None:
    """PASS k/n with Wilson 95% intervals per level, model and polarity; what is missing;
    whether the folder is publishable (a folder `calibrate` wrote opens instead with how many
    cells came out as expected).

    Example: `evalkit report results/ --format markdown`, `evalkit report results/ --html r.html`
    """
    from rich.text import Text

    from evalkit.cli.app import err, out
    from evalkit.records.folder.run_ids import default_workdir
    from evalkit.records.report.build import build_report
    from evalkit.records.report.text import to_markdown

    suite = state.suite()
    work = (workdir or default_workdir(suite)).resolve()
    if junit is not None:
        from evalkit.records.pages.target import check_target

        check_target(suite, [work], junit, "junit")
    built = build_report(suite, work)
    if html is not None:
        from evalkit.records.pages.html import parse_placement, write_html

        stats = write_html(suite, work, html, parse_placement(evidence), report=built)
        where = f" and {rel(stats.sibling_dir)}/" if stats.sibling_dir else ""
        err.print(
            Text(
                f"wrote {rel(stats.path)}{where}: {stats.reps} rep(s), "
                f"{stats.masked_lines} line(s) masked as task text"
            )
        )
    if junit is not None:
        from evalkit.ci.cases import report_suites
        from evalkit.ci.junit import write

        write(junit, report_suites(built))
        err.print(Text(f"wrote {rel(junit)}"))
    if fmt is Format.json:
        print(built.model_dump_json(indent=2))
    elif fmt is Format.markdown:
        print(to_markdown(built), end="")
    else:
        from evalkit.cli.report_tables import print_report

        print_report(out, built)

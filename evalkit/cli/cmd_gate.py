"""`evalkit gate`: B against A as one exit code: 2 untrusted, 3 underpowered, 1 worse, 0 not."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from evalkit.cli.app import command, rel, state
from evalkit.cli.options import (
    AllowBackends,
    FirstFolder,
    Format,
    SecondFolder,
    SideA,
    SideB,
    Wide,
)

if TYPE_CHECKING:
    from evalkit.compare.gate import Verdict


@command("gate", short_help="Exit non-zero when B is worse than A or cannot be told.")
def gate_command(
    first: FirstFolder,
    second: SecondFolder = None,
    a: SideA = "",
    b: SideB = "",
    allow_confounded: Annotated[
        bool, typer.Option("--allow-confounded", help="gate although several factors differ")
    ] = False,
    alpha: Annotated[
        float | None,
        typer.Option("--alpha", min=0.0, max=1.0, help="family-wise level (default 0.05)"),
    ] = None,
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin", min=0.0, max=1.0, help="non-inferiority: B must be shown within M of A"
        ),
    ] = None,
    max_errors: Annotated[
        float | None,
        typer.Option(
            "--max-errors", min=0.0, max=1.0, help="largest ERROR share of a side (default 0.1)"
        ),
    ] = None,
    max_aware: Annotated[
        float | None,
        typer.Option(
            "--max-aware", min=0.0, max=1.0,
            help="largest share of a cell's rows whose agent said it suspects a test (off)",
        ),
    ] = None,
    fail_on_bars: Annotated[
        bool, typer.Option("--fail-on-bars", help="a missed expected bar exits 1")
    ] = False,
    superiority: Annotated[
        bool,
        typer.Option("--superiority", help="exit 0 only when B - A > D is shown (--min-delta)"),
    ] = False,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential",
            help="anytime-valid: look after every rep and stop when it is decided",
        ),
    ] = False,
    min_delta: Annotated[
        float | None,
        typer.Option("--min-delta", min=0.0, max=1.0, help="the floor D on 'better' (default 0)"),
    ] = None,
    aa_from: Annotated[
        Path | None,
        typer.Option(
            "--aa-from",
            help="an A/A folder (grid --aa): refuse a difference below its chance 95th percentile",
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table, markdown or json")] = (
        Format.table
    ),
    junit: Annotated[
        Path | None, typer.Option("--junit", help="also write JUnit XML for the CI to FILE")
    ] = None,
    wide: Wide = False,
    allow_backends: AllowBackends = False,
) -> None:
    """Exit 2 when the comparison cannot be trusted (not PUBLISHABLE, too many ERROR rows,
    ERROR rows that could change the decision or ERROR shares that differ between the arms,
    confounded, incomplete), 3 when too few scenarios could show a regression, 1 when one is
    shown (exact one-sided sign-flip test per model and polarity, Holm), else 0. With
    --superiority: 0 only when B is shown better than A by more than --min-delta on every
    test. Appends a summary to GITHUB_STEP_SUMMARY when it is set.

    Example: `evalkit gate results/terse` (against the baseline),
    `evalkit gate results/base results/terse --junit gate.xml`
    """
    from evalkit.ci.github import append_summary
    from evalkit.ci.junit import write
    from evalkit.compare.gate import choose_sides, gate, settings_for
    from evalkit.compare.gate_render import error_lines, junit_suites, to_markdown
    from evalkit.errors import EvalkitError

    suite = state.suite()
    if junit is not None:
        from evalkit.records.pages.target import check_target

        check_target(suite, [p.resolve() for p in (first, second) if p is not None], junit,
                     "junit")  # fmt: skip
    try:
        side_a, side_b = choose_sides(suite, first, second, a, b)
    except EvalkitError as refused:
        _refused(suite.name, junit, refused)
    if junit is not None:
        check_target(suite, [side_a.workdir, side_b.workdir], junit, "junit")
    try:
        settings = settings_for(
            suite, alpha, margin, max_errors, fail_on_bars, min_delta, superiority, sequential
        )
        if aa_from is not None:
            settings.aa_from = str(aa_from)
        settings.max_aware = max_aware
        settings.allow_backends = allow_backends
        verdict = gate(suite, side_a, side_b, settings, allow_confounded)
    except EvalkitError as refused:
        _refused(suite.name, junit, refused)
    if junit is not None:
        write(junit, junit_suites(verdict))
    append_summary(to_markdown(verdict))
    if fmt is Format.json:
        print(verdict.model_dump_json(indent=2))
    elif fmt is Format.markdown:
        print(to_markdown(verdict), end="")
    else:
        _print_table(verdict, wide)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        stream = sys.stderr if fmt is Format.json else sys.stdout
        for line in error_lines(verdict):
            print(line, file=stream)
    if junit is not None:
        print(f"wrote {rel(junit)}", file=sys.stderr)
    raise typer.Exit(verdict.exit_code)


def _refused(suite: str, junit: Path | None, refused: Exception) -> NoReturn:
    """A gate that could not be drawn, said in the JUnit file and the step summary too."""
    from evalkit.ci.github import append_summary
    from evalkit.ci.junit import write
    from evalkit.compare.gate_render import refused_markdown, refused_suites

    if junit is not None:
        write(junit, refused_suites(suite, str(refused)))
    append_summary(refused_markdown(suite, str(refused)))
    raise refused


def _print_table(verdict: Verdict, wide: bool) -> None:
    from rich.text import Text

    from evalkit.cli.app import out
    from evalkit.cli.fit import print_fitted, print_wide
    from evalkit.compare.gate_render import (
        COMPACT_TEST_COLUMNS,
        TEST_COLUMNS,
        against_lines,
        compact_test_row,
        error_lines_text,
        headline,
        settings_line,
        test_row,
    )

    good = verdict.status == "pass"
    out.print(Text(headline(verdict), style="bold green" if good else "bold red"))
    out.print(Text(f"evalkit gate: {verdict.suite}"))
    out.print(Text(f"A: {verdict.a}"))
    out.print(Text(f"B: {verdict.b}"))
    out.print(Text(settings_line(verdict), style="dim"))
    out.print()
    if wide:
        print_wide(out, "", TEST_COLUMNS, [list(test_row(t)) for t in verdict.tests])
    else:
        print_fitted(out, "", COMPACT_TEST_COLUMNS, [compact_test_row(t) for t in verdict.tests])
        for line in against_lines(verdict):
            out.print(Text(line))
    for bar in verdict.bars:
        out.print(Text(f"expected {bar.cell}: {bar.k}/{bar.n} against {bar.bar}: {bar.verdict}"))
    for line in error_lines_text(verdict):
        out.print(Text(line))
    out.print(Text(verdict.line, style="bold"))

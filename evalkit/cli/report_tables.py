"""The table form of `evalkit report`, shaped to the terminal's width (80 columns and up)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from evalkit.cli.fit import compact_rate, headline_rate, print_fitted
from evalkit.records.report.factors import (
    agent_line,
    backend_line,
    factor_cells,
    judge_line,
    subject_cells,
    with_subject,
)
from evalkit.records.report.labels import (
    ACTIVATION_NOTE,
    ACTIVATION_TITLE,
    EARNED_NOTE,
    EXPECTED_NOTE,
    NOISE_TITLE,
    breach_line,
    calibration_lead,
    calibration_tail,
    expected_line,
    expected_misses,
    expected_title,
    fmt_counts,
    fmt_via,
    inner_loop_line,
    level_title,
    missing_lines,
    model_title,
    noise_lines,
    retry_line,
    unknown_lines,
)
from evalkit.records.report.model import SETS, Cell, LevelTable, Report
from evalkit.records.report.text import (
    ACTIVATION_COLUMNS,
    EARNED_COLUMNS,
    USAGE_COLUMNS,
    activation_rows,
    earned_rows,
    expected_columns,
    expected_rows,
    model_rows,
    usage_rows,
)
from evalkit.records.rows.subject import short_hash

_KNOWN = {"model", "polarity", "variant", "subject_hash", "cli_version", "judge", "agent"}
_LEGEND = (
    "The interval counts scenarios: clustered by scenario over G scenarios with design effect "
    "deff; indep: reps as independent (Wilson), optimistic when a scenario's reps are alike. "
    "A cell of one scenario shows reps as independent alone (clustered: n/a (one scenario))."
)


def _group_keys(table: LevelTable) -> list[str]:
    """String fields a cell carries besides model and polarity (a variant, a kind): each
    becomes a column, so a report that grows a grouping shows it without a change here."""
    keys: list[str] = []
    for cell in table.cells:
        for key, value in cell:
            if isinstance(value, str) and key not in _KNOWN and key not in keys:
                keys.append(key)
    return keys


def _optional_count(cell: Cell, name: str) -> str | None:
    value = getattr(cell, name, None)
    return str(value) if isinstance(value, int) else None


def level_table(table: LevelTable, report: Report) -> tuple[list[str], list[list[str]]]:
    keys = _group_keys(table)
    breaches = any(_optional_count(c, "breaches") not in (None, "0") for c in table.cells)
    columns = [*with_subject(report, ("model",)), *keys, "polarity", "PASS k/n 95%", "AWARE k/n"]
    columns += ["ERROR"]
    columns += ["breaches"] if breaches else []
    columns += ["B:FAIL", "A-via (PASS)", "flags (rows)"]
    rows = []
    for c in table.cells:
        row = [
            c.model,
            *subject_cells(report, c.variant, c.subject_hash),
            *factor_cells(report, c),
        ]
        row += [*(str(getattr(c, k, "")) for k in keys), c.polarity]
        row += [compact_rate(c.pass_rate), f"{c.aware}/{c.pass_rate.n}", str(c.pass_rate.errors)]
        row += [_optional_count(c, "breaches") or "0"] if breaches else []
        row += [str(c.b_fail), fmt_via(c), fmt_counts(c.flags)]
        rows.append(row)
    return columns, rows


MODEL_COLUMNS = ("model", "recall (pos)", "ERROR", "specificity (neg)", "ERROR")
INNER_MODEL_COLUMNS = ("model", "PASS (pos)", "ERROR", "PASS (neg)", "ERROR")


def model_table(report: Report, which: str) -> list[list[str]]:
    return [list(row) for row in model_rows(report, which, compact_rate)]


def expected_table(report: Report) -> list[list[str]]:
    return [list(row) for row in expected_rows(report, compact_rate)]


def _subject_header(console: Console, built: Report) -> None:
    if len(built.subjects) == 1:
        [one] = built.subjects
        console.print(Text(f"subject: {one.variant} {short_hash(one.subject_hash)}"))
        return
    console.print(
        Text(
            f"SUBJECTS: {len(built.subjects)} - each rate is of one variant and subject; "
            "none is pooled",
            style="bold",
        )
    )
    variants = [x.variant for x in built.subjects]
    for x in built.subjects:
        changed = " (wording changed between runs)" if variants.count(x.variant) > 1 else ""
        console.print(Text(f"  {x.variant} {short_hash(x.subject_hash)}: {x.rows} row(s){changed}"))


def print_report(console: Console, built: Report) -> list[str]:
    """Print every table in a shape that fits; return the shapes used (for tests)."""
    _print_head(console, built)
    shapes = _print_tables(console, built)
    _print_tail(console, built)
    return shapes


def _print_head(console: Console, built: Report) -> None:
    """What the folder is, and every warning to read before any rate."""
    lead = calibration_lead(built)
    if built.calibration is not None:
        good = built.calibration.ok
        console.print(Text(lead[0], style="bold green" if good else "bold red"))
        for line in lead[1:]:
            console.print(Text(line))
    console.print(Text(f"evalkit report: {built.suite} - {built.rows} row(s)", style="bold"))
    console.print(Text(f"from {built.workdir}"))
    if built.unconfined:
        console.print(
            Text(
                f"UNCONFINED: {built.unconfined} row(s) ran without their OS sandbox; the agent "
                "could reach the whole machine (never PUBLISHABLE)",
                style="bold red",
            )
        )
    console.print(Text(", ".join(f"{which} set: {label}" for which, label in built.sets.items())))
    if built.subjects:
        _subject_header(console, built)
    if built.judges:
        several = len(built.judges) > 1
        console.print(Text(judge_line(built), style="bold red" if several else ""))
    if agent_line(built):
        console.print(Text(agent_line(built), style="bold" if len(built.agents) > 1 else ""))
    if backend_line(built):
        console.print(Text(backend_line(built), style="bold"))
    console.print(Text(f"PASS k/n 95%: PASS rows of all rows (ERROR included). {_LEGEND}"))
    if built.inner_loop:
        console.print(Text(inner_loop_line(built), style="bold yellow"))
    if expected_misses(built):
        console.print(Text(expected_line(built), style="bold red"))
    if built.breaches:
        console.print(Text(breach_line(built), style="bold red"))
    if built.incomplete:
        console.print(Text("INCOMPLETE", style="bold red"))
        for line in missing_lines(built):
            console.print(Text(f"  {line}"))


def _print_tables(console: Console, built: Report) -> list[str]:
    shapes = []
    for level in built.levels:
        console.print()
        columns, rows = level_table(level, built)
        shapes.append(print_fitted(console, level_title(level, built.inner_loop), columns, rows))
    model_columns = with_subject(built, INNER_MODEL_COLUMNS if built.inner_loop else MODEL_COLUMNS)
    for which in SETS:
        rows = model_table(built, which)
        if rows:
            console.print()
            title = model_title(built, which)
            shapes.append(print_fitted(console, title, model_columns, rows))
    earned = earned_rows(built, compact_rate)
    if earned:
        console.print()
        columns = list(with_subject(built, EARNED_COLUMNS))
        shapes.append(print_fitted(console, "How positives passed", columns, earned))
        console.print(Text(EARNED_NOTE))
    if built.activation:
        console.print()
        columns = list(with_subject(built, ACTIVATION_COLUMNS))
        table = [list(row) for row in activation_rows(built, headline_rate)]
        shapes.append(print_fitted(console, ACTIVATION_TITLE, columns, table))
        console.print(Text(ACTIVATION_NOTE))
    if built.expected:
        console.print()
        wanted = expected_columns(built)
        shapes.append(print_fitted(console, expected_title(built), wanted, expected_table(built)))
        console.print(Text(EXPECTED_NOTE))
    if built.usage:
        console.print()
        shapes.append(
            print_fitted(console, "Usage (all attempts)", USAGE_COLUMNS, usage_rows(built))
        )
    return shapes


def _print_tail(console: Console, built: Report) -> None:
    """Where the noise comes from, the retries, unknown scenarios and skipped lines, then the
    verdict."""
    noise = noise_lines(built)
    if noise:
        console.print(Text(NOISE_TITLE, style="bold"))
        for line in noise:
            console.print(Text(f"  {line}"))
    if retry_line(built):
        console.print(Text(retry_line(built)))
    if built.unknown:
        console.print(Text("Unknown scenarios (no longer in the suite)", style="bold"))
        for line in unknown_lines(built):
            console.print(Text(f"  {line}"))
    if built.rescored_rows:
        console.print(
            Text(f"{built.rescored_rows} row(s) replaced by a re-score (kept in the file)")
        )
    if built.unreadable:
        console.print(Text("Lines that did not read (skipped)", style="bold"))
        for line in built.unreadable:
            console.print(Text(f"  {line}"))
    if built.calibration is not None:
        for line in calibration_tail(built):
            console.print(Text(line))
        return
    verdict = built.publishability
    console.print(Text(verdict.verdict, style="bold green" if verdict.publishable else "bold red"))

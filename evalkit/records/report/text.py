"""The report's tables as rows of text, and the markdown form built from them."""

from __future__ import annotations

from collections.abc import Callable

from evalkit.records.report.factors import (
    SUBJECT_COLUMNS,
    agent_line,
    backend_line,
    factor_cells,
    judge_line,
    split_factors,
    subject_cells,
    subject_lines,
    with_subject,
)
from evalkit.records.report.labels import (
    ACTIVATION_NOTE,
    ACTIVATION_TITLE,
    EARNED_NOTE,
    EXPECTED_NOTE,
    INTERVAL_NOTE,
    NOISE_TITLE,
    breach_line,
    calibration_lead,
    calibration_tail,
    expected_line,
    expected_misses,
    expected_title,
    fmt_counts,
    fmt_rate,
    fmt_via,
    inner_loop_line,
    level_title,
    missing_lines,
    model_title,
    noise_lines,
    retry_line,
    unknown_lines,
)
from evalkit.records.report.model import (
    SETS,
    LevelTable,
    Rate,
    Report,
)
from evalkit.records.rows.policy_models import is_policy

LEVEL_COLUMNS = (
    "model",
    "polarity",
    "PASS k/n [95%]",
    "AWARE k/n",
    "ERROR",
    "A-via (PASS)",
    "B:FAIL",
    "BREACH",
    "flags (rows)",
)


MODEL_COLUMNS = (
    "model",
    "recall: PASS k/n positives [95%]",
    "ERROR (pos)",
    "specificity: PASS k/n negatives [95%]",
    "ERROR (neg)",
)


INNER_MODEL_COLUMNS = (
    "model",
    "PASS k/n of the chosen positives [95%]",
    "ERROR (pos)",
    "PASS k/n of the chosen negatives [95%]",
    "ERROR (neg)",
)


EXPECTED_COLUMNS = ("set", "level", "model", "polarity", "verdict", "bar", "PASS k/n [Wilson 95%]")


ACTIVATION_COLUMNS = (
    "model",
    "set",
    "skill",
    "side",
    "fired when wanted [95%]",
    "quiet when not [95%]",
    "ERROR",
)


def activation_rows(
    report: Report, fmt: Callable[[Rate], str] = fmt_rate
) -> list[tuple[str, ...]]:
    """Per set, model, subject and skill: its two rates, the table form with a narrower one."""
    return [
        (
            a.model,
            *subject_cells(report, a.variant, a.subject_hash),
            *factor_cells(report, a),
            a.set,
            a.skill,
            a.side,
            fmt(a.when_wanted),
            fmt(a.quiet_when_not),
            str(a.when_wanted.errors + a.quiet_when_not.errors),
        )
        for a in report.activation
    ]


EARNED_COLUMNS = ("model", "set", "level", "axis A: k/n positives [95%]", "PASS", "B-via (PASS)")


def earned_rows(report: Report, fmt: Callable[[Rate], str] = fmt_rate) -> list[tuple[str, ...]]:
    """Per positive cell: the axis-A rate over all positives, and the PASS rows by B route."""
    return [
        (
            c.model,
            *subject_cells(report, c.variant, c.subject_hash),
            *factor_cells(report, c),
            table.set,
            table.level or table.kind or "-",
            fmt(c.axis_a),
            str(c.pass_rate.k),
            fmt_counts(c.b_via),
        )
        for table in report.levels
        for c in table.cells
        if c.polarity == "positive" and c.axis_a is not None
    ]


def level_rows(table: LevelTable, report: Report | None = None) -> list[tuple[str, ...]]:
    return [
        (
            c.model,
            *(subject_cells(report, c.variant, c.subject_hash) if report else ()),
            *(factor_cells(report, c) if report else ()),
            c.polarity,
            fmt_rate(c.pass_rate),
            f"{c.aware}/{c.pass_rate.n}",
            str(c.pass_rate.errors),
            fmt_via(c),
            str(c.b_fail),
            str(c.breaches),
            fmt_counts(c.flags),
        )
        for c in table.cells
    ]


def model_rows(
    report: Report, which: str, rate_text: Callable[[Rate], str] = fmt_rate
) -> list[tuple[str, ...]]:
    """One row per model of a set; the table form passes a narrower rate."""
    return [
        (
            m.model,
            *subject_cells(report, m.variant, m.subject_hash),
            *factor_cells(report, m),
            rate_text(m.recall),
            str(m.recall.errors),
            rate_text(m.specificity),
            str(m.specificity.errors),
        )
        for m in report.models
        if m.set == which
    ]


def expected_rows(
    report: Report, rate_text: Callable[[Rate], str] = fmt_rate
) -> list[tuple[str, ...]]:
    """One row per expected bar; the table form passes a narrower rate."""
    return [
        (
            x.set,
            x.level,
            x.model,
            *subject_cells(report, x.variant, x.subject_hash),
            *factor_cells(report, x),
            x.polarity,
            x.verdict.upper(),
            x.bar_text,
            rate_text(x.observed),
        )
        for x in report.expected
    ]


def expected_columns(report: Report) -> tuple[str, ...]:
    factors = tuple(column for column, _ in split_factors(report))
    return (
        *EXPECTED_COLUMNS[:3],
        *subject_cells(report, *SUBJECT_COLUMNS),
        *factors,
        *EXPECTED_COLUMNS[3:],
    )


USAGE_COLUMNS = (
    "model",
    "attempts",
    "input tokens",
    "output tokens",
    "cache read",
    "cache write",
    "turns",
    "duration s",
    "cost USD (CLI estimate)",
)


SCRIPTED_COST = "scripted: no cost"
"""A policy's cost cell: the CLI prices the scripted model's tokens as a real model's, an
estimate of a bill nobody pays."""


def usage_rows(report: Report) -> list[tuple[str, ...]]:
    return [
        (
            u.model,
            str(u.attempts),
            str(u.input_tokens),
            str(u.output_tokens),
            str(u.cache_read_tokens),
            str(u.cache_write_tokens),
            str(u.turns),
            f"{u.duration_ms / 1000:.1f}",
            SCRIPTED_COST if is_policy(u.model) else f"{u.cost_usd_estimate:.4f}",
        )
        for u in report.usage
    ]


def _md_table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(columns), "|" + "---|" * len(columns)] + [line(r) for r in rows]


def _md_activation(report: Report) -> list[str]:
    if not report.activation:
        return []
    rows = activation_rows(report)
    columns = with_subject(report, ACTIVATION_COLUMNS)
    return [f"## {ACTIVATION_TITLE}", "", ACTIVATION_NOTE, "", *_md_table(columns, rows), ""]


def to_markdown(report: Report) -> str:
    """GitHub-flavoured markdown: the same content as the table form, pasteable into an issue."""
    out = [f"# evalkit report: {report.suite}", ""]
    if report.calibration is not None:
        [headline, *rest] = calibration_lead(report)
        out += [f"**{headline}**", ""] + [f"- {line.strip()}" for line in rest] + [""]
    out.append(f"{report.rows} row(s) from {report.workdir}")
    out.append("")
    out += [f"- {which} set: {label}" for which, label in report.sets.items()]
    out += [f"- {line}" for line in subject_lines(report)[:1]]
    out += [f"  - {line.strip()}" for line in subject_lines(report)[1:]]
    out += [f"- {judge_line(report)}"] if report.judges else []
    out += [f"- {agent_line(report)}"] if agent_line(report) else []
    out += [f"- {backend_line(report)}"] if backend_line(report) else []
    out.append("")
    out += [INTERVAL_NOTE, ""]
    if report.inner_loop:
        out += [f"**{inner_loop_line(report)}**", ""]
    if expected_misses(report):
        out += [f"**{expected_line(report)}**", ""]
    if report.breaches:
        out += [f"**{breach_line(report)}**", ""]
    if report.incomplete:
        out += ["## INCOMPLETE", ""] + [f"- {line}" for line in missing_lines(report)] + [""]
    for table in report.levels:
        out += [f"## {level_title(table, report.inner_loop)}", ""]
        out += _md_table(with_subject(report, LEVEL_COLUMNS), level_rows(table, report)) + [""]
    noise = noise_lines(report)
    if noise:
        out += [f"## {NOISE_TITLE}", ""] + [f"- {x.strip()}" for x in noise] + [""]
    columns = INNER_MODEL_COLUMNS if report.inner_loop else MODEL_COLUMNS
    for which in SETS:
        rows = model_rows(report, which)
        if rows:
            out += [f"## {model_title(report, which)}", ""]
            out += _md_table(with_subject(report, columns), rows) + [""]
    earned = earned_rows(report)
    if earned:
        out += ["## How positives passed", "", EARNED_NOTE, ""]
        out += _md_table(with_subject(report, EARNED_COLUMNS), earned) + [""]
    out += _md_activation(report)
    if report.expected:
        out += [f"## {expected_title(report)}", "", EXPECTED_NOTE, ""]
        out += _md_table(expected_columns(report), expected_rows(report)) + [""]
    if report.usage:
        out += ["## Usage", ""] + _md_table(USAGE_COLUMNS, usage_rows(report)) + [""]
    if retry_line(report):
        out += [retry_line(report), ""]
    if report.unknown:
        out += ["## Unknown scenarios (no longer in the suite)", ""]
        out += [f"- {line}" for line in unknown_lines(report)] + [""]
    if report.unreadable:
        out += ["## Lines that did not read (skipped)", ""]
        out += [f"- {line}" for line in report.unreadable] + [""]
    if report.calibration is not None:
        out += [f"- {line}" for line in calibration_tail(report)]
    else:
        out.append(f"**{report.publishability.verdict}**")
    return "\n".join(out) + "\n"

"""The text forms of a comparison: rows for a table, and markdown to paste into an issue."""

from __future__ import annotations

import re

from evalkit.compare.compare import Comparison, Entry, SideSummary

COLUMNS = (
    "set",
    "level",
    "measure",
    "analysis",
    "A k/n (ERR)",
    "B k/n (ERR)",
    "B-A",
    "95% interval",
    "p",
    "what this n can show",
)


LEGEND = (
    "per-rep: Fisher exact two-sided p and Newcombe score interval, treating reps as "
    "independent (optimistic when scenarios differ); per-scenario: difference of per-scenario "
    "pass rates, exact two-sided sign-flip test over the scenarios both sides ran."
)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:+.{digits}f}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _count(entry: Entry, side: str) -> str:
    c = entry.a if side == "a" else entry.b
    return f"{c.k}/{c.n} ({c.errors})"


def strength(entry: Entry) -> str:
    if entry.analysis == "per-scenario":
        return f"k={entry.scenarios}, p floor {_p(entry.p_floor)}: {entry.note}"
    power = entry.power
    if power is None or power.rate_used is None:
        return "-"
    return (
        f"{power.reps_per_side} reps/side to detect a {power.change:.0%} change from "
        f"A's rate {power.rate_used:.2f}"
    )


def entry_row(entry: Entry) -> tuple[str, ...]:
    interval = (
        "-" if entry.interval is None else f"[{entry.interval[0]:+.3f}, {entry.interval[1]:+.3f}]"
    )
    return (
        entry.set,
        entry.level,
        entry.measure,
        entry.analysis,
        _count(entry, "a"),
        _count(entry, "b"),
        _num(entry.difference),
        interval,
        _p(entry.p_value),
        strength(entry),
    )


def _where(entry: Entry) -> str:
    return f"{entry.set}/{entry.level}/{entry.measure} {entry.analysis}"


def after_lines(comparison: Comparison) -> list[str]:
    """Below the table, one short line each: how far a cell's ERROR rows could move B-A,
    and with --min-delta, what each paired cell showed of 'better by more than D'."""
    found = []
    for e in comparison.comparisons:
        if (e.a.errors or e.b.errors) and e.error_bounds is not None:
            low, high = e.error_bounds
            found.append(f"{_where(e)}: ERROR rows could move B-A to [{low:+.3f}, {high:+.3f}]")
    found += [f"{_where(e)}: {e.better}" for e in comparison.comparisons if e.better]
    found += [
        f"{_where(e)}: sequential (anytime-valid) p = {e.sequential_p:.4g}"
        for e in comparison.comparisons
        if e.sequential_p is not None
    ]
    for e in comparison.comparisons:
        if e.noise is not None and e.level == "all":
            n = e.noise
            found.append(
                f"{_where(e)}: between {n.between:.3f}, within A {n.within_a:.3f}, "
                f"B {n.within_b:.3f}; {n.next_grid}"
            )
    return found


def short(value: str) -> str:
    """A hash shown by its first 12 hex digits; the JSON keeps it whole."""
    return re.sub(r"sha256:([0-9a-f]{12})[0-9a-f]+", r"sha256:\1", value)


def side_line(name: str, side: SideSummary) -> str:
    chosen = f" {side.selector}" if side.selector else ""
    chosen += " (the baseline)" if side.baseline else ""
    factors = "; ".join(f"{k}: {', '.join(short(x) for x in v)}" for k, v in side.factors.items())
    sets = "".join(f"; {which} set: {label}" for which, label in side.sets.items())
    return (
        f"{name}: {side.workdir}{chosen} - {side.rows} row(s), {side.errors} ERROR; {factors}{sets}"
    )


def to_markdown(comparison: Comparison) -> str:
    out = [f"# evalkit compare: {comparison.suite}", ""]
    out += [f"- {side_line('A', comparison.a)}", f"- {side_line('B', comparison.b)}", ""]
    out += [f"**{note}**" if note.startswith("CONFOUNDED") else note for note in comparison.notes]
    out.append("")

    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out += [line(COLUMNS), "|" + "---|" * len(COLUMNS)]
    out += [line(entry_row(e)) for e in comparison.comparisons]
    after = after_lines(comparison)
    if after:
        out += ["", *(f"- {x}" for x in after)]
    out += ["", LEGEND]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- 80 columns

COMPACT_COLUMNS = ("cell", "by", "A k/n", "B k/n", "B-A", "95% interval", "p", "n")
"""The default terminal table: every number whole at 80 columns. "What this n can show" is
long prose, so it moves below the table as numbered notes, one per distinct text."""

COMPACT_LEGEND = (
    "by rep: Fisher exact p and Newcombe interval, reps taken as independent (optimistic "
    "when scenarios differ); by scenario: exact sign-flip test over the scenarios both sides "
    "ran. n: the note below on what this n can show. --wide: every column in one table."
)


def _compact_count(entry: Entry, side: str) -> str:
    c = entry.a if side == "a" else entry.b
    return f"{c.k}/{c.n}" + (f" ({c.errors} ERR)" if c.errors else "")


def compact_rows(comparison: Comparison) -> tuple[list[list[str]], list[str]]:
    """The compact rows, and the notes they point to (`[1]` ... in the `n` column)."""
    notes: list[str] = []
    rows = []
    for entry in comparison.comparisons:
        said = strength(entry)
        ref = "-"
        if said != "-":
            if said not in notes:
                notes.append(said)
            ref = f"[{notes.index(said) + 1}]"
        interval = (
            "-"
            if entry.interval is None
            else f"[{entry.interval[0]:+.3f}, {entry.interval[1]:+.3f}]"
        )
        rows.append(
            [
                f"{entry.set} {entry.level} {entry.measure}",
                "rep" if entry.analysis == "per-rep" else "scenario",
                _compact_count(entry, "a"),
                _compact_count(entry, "b"),
                _num(entry.difference),
                interval,
                _p(entry.p_value),
                ref,
            ]
        )
    return rows, [f"[{i}] {note}" for i, note in enumerate(notes, 1)]

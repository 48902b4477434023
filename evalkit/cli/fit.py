"""Tables that fit the terminal without cutting a name.

A table is printed in the first shape that fits the console's width, every row on one
line: the plain table; then grouped by its first column (the name as a heading line, the
rest beneath under one shared header); then the other columns split over several tables,
each repeating the first; at last one block per row, a field per line. Cells are never cropped
or folded, so a model, policy or scenario name always reads whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from evalkit.records.report.model import Rate

Row = Sequence[str]


def compact_rate(r: Rate) -> str:
    """`9/12 40–95% (indep 55–91%, deff 2.1, G 6)`: the scenario-clustered interval first,
    the rep-level Wilson beside it; `3/3 44–100%` where one scenario allows only the rep-level
    one (the legend says so); whole percent."""
    if r.n == 0 or r.low is None or r.high is None:
        return "0/0"
    independent = f"{_pct(r.low)}\u2013{_pct(r.high)}%"
    reach = f" ERROR as pass {_pct(r.errors_as_pass)}%" if r.errors and r.errors_as_pass else ""
    if r.clustered_low is None or r.clustered_high is None or r.deff is None:
        return f"{r.k}/{r.n} {independent}{reach}"
    clustered = f"{_pct(r.clustered_low)}\u2013{_pct(r.clustered_high)}%"
    return (
        f"{r.k}/{r.n} {clustered} (indep {independent}, deff {r.deff:.1f}, G {r.scenarios})" + reach
    )


def headline_rate(r: Rate) -> str:
    """`9/12 40–95%`: k/n and the headline interval alone (clustered where there is one), for
    a table that sets two rates side by side; the legend says which interval it is."""
    low, high = r.head_low, r.head_high
    if r.n == 0 or low is None or high is None:
        return "0/0"
    return f"{r.k}/{r.n} {_pct(low)}\u2013{_pct(high)}%"


def _pct(x: float) -> int:
    return int(x * 100 + 0.5)


def _table(
    columns: Sequence[str],
    rows: Sequence[Row],
    title: str | None = None,
    widths: Sequence[int] | None = None,
    header: bool = True,
) -> Table:
    table = Table(
        title=Text(title, style="bold") if title else None,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1),
        show_header=header,
    )
    for index, column in enumerate(columns):
        width = widths[index] if widths else None
        table.add_column(Text(column), no_wrap=True, overflow="ignore", width=width)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def plain_table(columns: Sequence[str], rows: Sequence[Row]) -> Table:
    return _table(columns, rows)


def fits(console: Console, table: Table) -> bool:
    """The table's natural width (measured without the console's limit, which clamps it)."""
    unbounded = console.options.update_width(1_000_000)
    return Measurement.get(console, unbounded, table).maximum <= console.width


def _widths(columns: Sequence[str], rows: Sequence[Row]) -> list[int]:
    return [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]


def print_fitted(console: Console, title: str, columns: Sequence[str], rows: Sequence[Row]) -> str:
    """Print rows in the first shape that fits; return the shape's name (for tests)."""
    if not rows:
        return "empty"
    table = _table(columns, rows, title)
    if fits(console, table):
        console.print(table)
        return "table"

    # grouped by the first column: its value as a heading line, one header for all groups
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row[0], []).append(row[1:])
    rest = columns[1:]
    widths = _widths(rest, [r[1:] for r in rows])
    head = _table(rest, [], title, widths)
    if fits(console, head):
        console.print(head)
        for name, grouped in groups.items():
            console.print(Text(name, style="bold cyan"))
            console.print(_table(rest, grouped, widths=widths, header=False))
        return "grouped"

    # the other columns split into as few tables as fit, the first column in each
    chunks: list[list[int]] = [[]]
    for index in range(1, len(columns)):
        trial = chunks[-1] + [index]
        if chunks[-1] and not fits(console, _table(*_pick(columns, rows, trial))):
            chunks.append([index])
        else:
            chunks[-1] = trial
    if all(fits(console, _table(*_pick(columns, rows, c))) for c in chunks):
        console.print(Text(title, style="bold"))
        for chunk in chunks:
            console.print(_table(*_pick(columns, rows, chunk)))
        return "split"

    console.print(Text(title, style="bold"))
    width = max(len(c) for c in rest)
    for row in rows:
        console.print(Text(row[0], style="bold cyan"))
        for column, cell in zip(rest, row[1:], strict=True):
            console.print(Text(f"  {column.ljust(width)}  {cell}"))
    return "records"


def print_wide(console: Console, title: str, columns: Sequence[str], rows: Sequence[Row]) -> str:
    """Every column in one table at its own width (`--wide`), past the terminal's edge if it
    must be: a person who asked for it scrolls or pipes it, and nothing is cut."""
    table = _table(columns, rows, title)
    unbounded = console.options.update_width(1_000_000)
    natural = Measurement.get(console, unbounded, table).maximum
    before = console.width
    console.width = max(before, natural)
    try:
        console.print(table)
    finally:
        console.width = before
    return "wide"


def _pick(
    columns: Sequence[str], rows: Sequence[Row], chosen: list[int]
) -> tuple[list[str], list[list[str]]]:
    keep = [0, *chosen]
    return [columns[i] for i in keep], [[r[i] for i in keep] for r in rows]


def short_ids(ids: Sequence[str]) -> dict[str, str]:
    """P1-L1-reporting -> P1, when every such prefix is unique; otherwise the full ids."""
    short = {i: i.split("-", 1)[0] for i in ids}
    if len(set(short.values())) != len(short):
        return {i: i for i in ids}
    return short

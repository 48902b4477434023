"""`evalkit compare --html`: the comparison as a forest plot, one row per cell.

A row is a set x level (or kind) x polarity cell, or a polarity pooled over levels: B - A
per rep with its 95 % interval drawn against zero, beside the per-scenario test's verdict
and the smallest p its scenario count can reach. The page is static HTML built here with
every string escaped (model names, notes and selectors came from a user or an agent), no
script, and a policy that forbids loading anything; it names folders relative to the suite.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from evalkit.compare.compare import (
    ALPHA,
    PER_REP,
    PER_SCENARIO,
    Comparison,
    Entry,
    SideSummary,
)
from evalkit.compare.render import LEGEND, short
from evalkit.outpaths import replace_file
from evalkit.records.pages.html import shown_folder
from evalkit.records.pages.target import GENERATOR, check_page
from evalkit.suite.config import Suite

WIDTH = 240  # pixels of the plot column, spanning B - A from -1 to +1
HEIGHT = 18


@dataclass(frozen=True)
class ForestRow:
    """One row of the plot: the unpaired entry and, when two scenarios or more were shared,
    the paired one."""

    rep: Entry
    scenario: Entry | None


def cells(comparison: Comparison) -> list[ForestRow]:
    paired = {
        (e.set, e.level, e.polarity): e
        for e in comparison.comparisons
        if e.analysis == PER_SCENARIO
    }
    return [
        ForestRow(e, paired.get((e.set, e.level, e.polarity)))
        for e in comparison.comparisons
        if e.analysis == PER_REP
    ]


def verdict(entry: Entry | None) -> str:
    """What the per-scenario test says of a cell, in words a reader acts on."""
    if entry is None or entry.p_value is None:
        return "no paired test (fewer than 2 shared scenarios)"
    if entry.p_value <= ALPHA:
        return f"differs (p ≤ {ALPHA})"
    if entry.p_floor is not None and entry.p_floor > ALPHA:
        return f"cannot tell: {entry.scenarios} scenarios cannot reach {ALPHA}"
    return "no difference shown"


def _moved(e: Entry) -> str:
    if e.difference is None:
        return f"{e.measure}: a side has no rows"
    a, b = f"{e.a.k}/{e.a.n}", f"{e.b.k}/{e.b.n}"
    if e.difference < 0:
        return f"{e.measure} fell from {a} to {b}"
    if e.difference > 0:
        return f"{e.measure} rose from {a} to {b}"
    return f"{e.measure} held ({a} and {b})"


def _decided(s: Entry | None) -> str:
    """What the paired test can say of a pooled cell, as the headline says it."""
    if s is None or s.p_value is None:
        return "no paired test: fewer than 2 shared scenarios"
    if s.p_floor is not None and s.p_floor > ALPHA:
        return f"with {s.scenarios} scenarios no test can reach {ALPHA}"
    if s.p_value <= ALPHA:
        return f"shown by the paired test (p = {s.p_value:.3g})"
    return f"not shown by the paired test (p = {s.p_value:.3g})"


def headline(comparison: Comparison) -> str:
    """One sentence a person acts on: each polarity pooled over levels, how it moved and
    whether the per-scenario test can say so."""
    parts = [
        f"{_moved(c.rep)}; {_decided(c.scenario)}"
        for c in cells(comparison)
        if c.rep.level == "all"
    ]
    return ". ".join(p[0].upper() + p[1:] for p in parts) + "." if parts else "No cells."


def direction(entry: Entry) -> str:
    """worse or better where B-A's per-rep interval lies wholly on one side of zero, else
    empty: the colour of a row, never its verdict."""
    if entry.interval is None:
        return ""
    if entry.interval[1] < 0:
        return "worse"
    if entry.interval[0] > 0:
        return "better"
    return ""


DECIDES = (
    "The verdict is the per-scenario test's: a scenario's reps are alike, so a per-rep "
    "interval that excludes zero can rest on a few scenarios' luck; it colours a row (red "
    "worse, green better) but decides nothing."
)


def check_forest_target(suite: Suite, workdirs: list[Path], out: Path) -> None:
    """Refuse OUT as `report --html` would, for every folder the comparison reads."""
    for workdir in workdirs:
        check_page(suite, workdir.resolve(), out, evidence=False)


def _x(value: float) -> float:
    return round((max(-1.0, min(1.0, value)) + 1) / 2 * WIDTH, 1)


def _svg(entry: Entry) -> str:
    zero = _x(0.0)
    mid = HEIGHT / 2
    parts = [
        f'<svg class="forest" width="{WIDTH}" height="{HEIGHT}" role="img">',
        f'<line class="zero" x1="{zero}" y1="0" x2="{zero}" y2="{HEIGHT}"/>',
    ]
    if entry.interval is not None:
        low, high = (_x(v) for v in entry.interval)
        parts.append(f'<line class="ci" x1="{low}" y1="{mid}" x2="{high}" y2="{mid}"/>')
    if entry.difference is not None:
        parts.append(f'<circle class="point" cx="{_x(entry.difference)}" cy="{mid}" r="4"/>')
    parts.append("</svg>")
    return "".join(parts)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _reach(e: Entry) -> str:
    """How far the cell's ERROR rows could move B-A; empty without any."""
    if not (e.a.errors or e.b.errors) or e.error_bounds is None:
        return ""
    return f" (ERROR rows: {e.error_bounds[0]:+.3f} to {e.error_bounds[1]:+.3f})"


def _row(cell: ForestRow) -> str:
    e, s = cell.rep, cell.scenario
    interval = "-" if e.interval is None else f"[{e.interval[0]:+.3f}, {e.interval[1]:+.3f}]"
    pooled = " pooled" if e.level == "all" else ""
    pooled += f" {direction(e)}" if direction(e) else ""
    tds = [
        (e.set, "name"),
        (e.level, "name"),
        (e.measure, "name"),
        (f"{e.a.k}/{e.a.n} ({e.a.errors})", "num"),
        (f"{e.b.k}/{e.b.n} ({e.b.errors})", "num"),
        (_num(e.difference) + _reach(e), "num difference"),
        (interval, "num interval"),
    ]
    cols = "".join(f'<td class="{cls}">{html.escape(text)}</td>' for text, cls in tds)
    cols += f'<td class="plot">{_svg(e)}</td>'
    cols += f'<td class="verdict">{html.escape(verdict(s))}</td>'
    cols += f'<td class="num p">{_p(s.p_value if s else None)}</td>'
    cols += f'<td class="num floor">{_p(s.p_floor if s else None)}</td>'
    return (
        f'<tr class="cell{pooled}" data-set="{html.escape(e.set)}" '
        f'data-level="{html.escape(e.level)}" data-polarity="{html.escape(e.polarity)}">'
        f"{cols}</tr>"
    )


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 16px 24px; color: #1f2328; }
h1 { font-size: 22px; margin: 0 0 6px; }
.muted { color: #57606a; }
.confounded { color: #cf222e; font-weight: 600; }
table { border-collapse: collapse; margin-top: 12px; }
th, td { border-bottom: 1px solid #d0d7de; padding: 3px 8px; text-align: left; }
th { background: #f6f8fa; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-family: ui-monospace, monospace; white-space: nowrap; }
tr.pooled { background: #f6f8fa; font-weight: 600; }
svg.forest line.zero { stroke: #8c959f; stroke-dasharray: 2 2; }
svg.forest line.ci { stroke: #0969da; stroke-width: 3; }
svg.forest circle.point { fill: #1f2328; }
svg.axis text { font-size: 10px; fill: #57606a; }
svg.axis line { stroke: #8c959f; }
tr.worse svg.forest line.ci { stroke: #cf222e; }
tr.better svg.forest line.ci { stroke: #1a7f37; }
tr.worse td.difference { color: #cf222e; font-weight: 600; }
tr.better td.difference { color: #1a7f37; font-weight: 600; }
p.headline { font-size: 17px; font-weight: 600; background: #f6f8fa; padding: 6px 12px;
  border-radius: 6px; }
"""


def _axis() -> str:
    """The plot column's scale, -1 to +1 with zero marked, drawn once in its header."""
    anchor = {-1.0: "start", 1.0: "end"}
    ticks = "".join(
        f'<line x1="{_x(v)}" y1="12" x2="{_x(v)}" y2="16"/>'
        f'<text x="{_x(v)}" y="10" text-anchor="{anchor.get(v, "middle")}">{v:+g}</text>'
        for v in (-1.0, -0.5, 0.0, 0.5, 1.0)
    )
    return f'<svg class="axis" width="{WIDTH}" height="16" role="img">{ticks}</svg>'



def forest_page(suite: Suite, comparison: Comparison) -> str:
    """The whole page as text; every string from the comparison escaped."""
    root = suite.root.resolve()

    def side(name: str, s: SideSummary) -> str:
        folder = shown_folder(root, Path(s.workdir).resolve())
        chosen = f" {s.selector}" if s.selector else ""
        factors = "; ".join(f"{k}: {', '.join(short(x) for x in v)}" for k, v in s.factors.items())
        return html.escape(
            f"{name}: {folder}{chosen} - {s.rows} row(s), {s.errors} ERROR; {factors}"
        )

    notes = "".join(
        f'<p class="{"confounded" if n.startswith("CONFOUNDED") else "note"}">'
        f"{html.escape(short(n))}</p>"
        for n in comparison.notes
    )
    head = (
        "<tr><th>set</th><th>level</th><th>measure</th><th>A k/n (ERR)</th>"
        "<th>B k/n (ERR)</th><th>B-A</th><th>95% interval</th>"
        f"<th>B-A per rep<br>{_axis()}</th><th>per-scenario verdict</th><th>p</th>"
        "<th>p floor</th></tr>"
    )
    rows = "".join(_row(c) for c in cells(comparison))
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            GENERATOR,
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'\">",
            f"<title>evalkit compare: {html.escape(comparison.suite)}</title>",
            f"<style>{STYLE}</style></head>",
            '<body data-ready="1">',
            f"<h1>evalkit compare: {html.escape(comparison.suite)}</h1>",
            f'<p class="headline" id="headline">{html.escape(headline(comparison))}</p>',
            f'<p class="muted" id="decides">{html.escape(DECIDES)}</p>',
            f'<p class="side">{side("A", comparison.a)}</p>',
            f'<p class="side">{side("B", comparison.b)}</p>',
            notes,
            f'<table class="forest"><thead>{head}</thead><tbody>{rows}</tbody></table>',
            f'<p class="muted">{html.escape(LEGEND)}</p>',
            "</body></html>\n",
        ]
    )


def write_forest(suite: Suite, comparison: Comparison, workdirs: list[Path], out: Path) -> int:
    """Write the page to OUT once it is found safe to write; the number of rows drawn."""
    check_forest_target(suite, workdirs, out)
    replace_file(out, forest_page(suite, comparison).encode("utf-8"))
    return len(cells(comparison))

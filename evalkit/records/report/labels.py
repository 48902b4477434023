"""The report's words: how a rate is written, and the titles, notes and warning lines every
form of the report shares.
"""

from __future__ import annotations

from evalkit.models import (
    ScenarioSet,
)
from evalkit.records.report.model import (
    CLUSTERED,
    INDEPENDENT,
    ONE_SCENARIO,
    Cell,
    LevelTable,
    Noise,
    Rate,
    Report,
)


def fmt_bound(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def fmt_rate(r: Rate) -> str:
    """`k/n [low, high]` of the headline interval, named, with the other beside it; or
    `0/0 [none]` when there is nothing to estimate from."""
    if r.n == 0:
        return "0/0 [none]"
    wilson_part = f"[{fmt_bound(r.low)}, {fmt_bound(r.high)}]"
    if r.headline == CLUSTERED:
        return (
            f"{r.k}/{r.n} [{fmt_bound(r.clustered_low)}, {fmt_bound(r.clustered_high)}] "
            f"{CLUSTERED} (G {r.scenarios}, deff {r.deff:.2f}; {INDEPENDENT} {wilson_part})"
            + errors_reach(r)
        )
    return f"{r.k}/{r.n} {wilson_part} {INDEPENDENT} (clustered: {ONE_SCENARIO})" + errors_reach(r)


def errors_reach(r: Rate) -> str:
    """How far the rate's ERROR rows could move it: to this, had every one passed."""
    if not r.errors or r.errors_as_pass is None:
        return ""
    return f"; {r.errors} ERROR: {r.k / r.n:.2f} to {r.errors_as_pass:.2f} had they passed"


NOISE_TITLE = "Where the noise comes from (one-way ANOVA by scenario, method of moments)"


def noise_lines(report: Report) -> list[str]:
    """Per cell: its between- and within-scenario variance, ICC, design effect and effective
    n on one line, and the sentence for the next grid indented under it."""
    found = []
    for table in report.levels:
        where = f"{table.set} {table.level or table.kind or '-'}"
        for c in table.cells:
            found += _noise_pair(f"{where} {c.model}{_variant(c.variant)} {c.polarity}", c.noise)
    for m in report.models:
        head = f"{m.set} all {m.model}{_variant(m.variant)}"
        found += _noise_pair(f"{head} recall", m.recall_noise)
        found += _noise_pair(f"{head} specificity", m.specificity_noise)
    return found


def _variant(variant: str) -> str:
    return "" if variant == "suite" else f" {variant}"


def _noise_pair(where: str, n: Noise | None) -> list[str]:
    if n is None:
        return []
    icc = "-" if n.icc is None else f"{n.icc:.2f}"
    return [
        f"{where}: between {n.between:.3f}, within {n.within:.3f}, ICC {icc}, "
        f"deff {n.deff:.2f}, n_eff {n.effective_n:.1f}",
        f"  {n.next_grid}",
    ]


def fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "-"


def fmt_via(cell: Cell) -> str:
    return "-" if cell.polarity != "positive" else fmt_counts(cell.a_via)


def inner_loop_line(report: Report) -> str:
    return (
        f"INNER LOOP: this folder holds an inner-loop grid ({', '.join(report.inner_loop_runs)}): "
        "the cells that failed before plus passing controls, not the whole set. No rate here "
        "is the set's recall or specificity."
    )


def expected_misses(report: Report) -> int:
    return sum(1 for x in report.expected if x.verdict == "miss")


def expected_line(report: Report) -> str:
    return (
        f"EXPECTED BAR MISSED: {expected_misses(report)} of {len(report.expected)} cell(s) "
        "below their hypothesised pass bar, interval included (see Expected against observed)"
    )


INTERVAL_NOTE = (
    "95% intervals count scenarios: the headline is clustered by scenario (G scenarios, "
    "design effect deff; Korn-Graubard: effective size with the df step, beta bounds); "
    "'indep' / 'reps as independent' is the rep-level Wilson interval beside it, optimistic "
    "when reps of one scenario are alike, and the only one for a cell of one scenario "
    "(clustered: n/a)"
)


EXPECTED_NOTE = (
    "met: PASS rate within the bars (at or above a minimum, at or below a maximum); miss: the "
    "Wilson 95% interval lies wholly below a minimum or above a maximum; unclear: past a bar, "
    "but the interval still reaches it"
)


def level_title(table: LevelTable, inner_loop: bool = False) -> str:
    title = f"{table.level or table.kind} - {table.set} set ({table.label})"
    return title + (" - inner loop, not the whole set" if inner_loop else "")


def model_title(report: Report, which: ScenarioSet) -> str:
    if report.inner_loop:
        return f"Per model - {which} set - inner loop: not the set's recall or specificity"
    return f"Per model - {which} set ({report.sets[which]})"


def expected_title(report: Report) -> str:
    return "Expected against observed" + (
        " - inner loop: chosen cells, not the set" if report.inner_loop else ""
    )


EARNED_NOTE = (
    "axis A: positives where the agent acted (A:PASS) of all positives, whatever axis B said; "
    "B-via: the route each positive PASS took on axis B, as the checker names it"
)


ACTIVATION_TITLE = "Activation among the neighbours"


ACTIVATION_NOTE = (
    "per skill: fired when wanted (a neighbour where the scenario names it in `wanted:`, the "
    "subject's skills on the other positives) and quiet when not; ERROR rows count against both; "
    "the interval is clustered by scenario where there are two or more"
)


def breach_line(report: Report) -> str:
    return (
        f"REAL-VAULT BREACH: {report.breaches} row(s) wrote into a guarded real-world path "
        "(see the BREACH column and each row's reasons)"
    )


def missing_lines(report: Report) -> list[str]:
    return report.grid_gaps + [
        f"{m.run_id} {m.scenario} {m.model}: {m.planned} rep(s) planned, {m.recorded} recorded"
        + (f", {m.skipped} {m.skip_reason}" if m.skipped else "")
        for m in report.missing
    ]


def retry_line(report: Report) -> str:
    r = report.retries
    if not r.reps:
        return ""
    why = ", ".join(f"{reason} {n}" for reason, n in r.reasons.items())
    return f"{r.reps} rep(s) retried ({r.attempts} superseded attempt(s) kept): {why}"


def unknown_lines(report: Report) -> list[str]:
    return [
        f"{u.scenario} {u.model}: {u.rows} row(s) (PASS {u.passes}, FAIL {u.fails}, "
        f"ERROR {u.errors})"
        for u in report.unknown
    ]


def calibration_lead(report: Report) -> list[str]:
    """What a calibration folder's report opens with: how its cells came out, each cell that
    differs, and the rows that are ERROR by design."""
    if report.calibration is None:
        return []
    c = report.calibration
    return [c.headline, *(f"  {line}" for line in c.differ), *c.expected_errors]


def calibration_tail(report: Report) -> list[str]:
    """What it closes with in place of a publishability verdict: whether verify re-derived
    every row."""
    pub = report.publishability
    if len(pub.problems) > 1:
        return pub.problems
    return [*pub.problems, f"every row re-derived from its evidence (verified {pub.verified_at})"]

"""`evalkit compare`: did B do better than A by more than chance, and could this design tell?

Every cell gets two analyses side by side. Per rep, unpaired: each rep an independent
trial (optimistic, since reps of one scenario are alike). Per scenario, paired: the honest
unit when both sides ran the same scenarios, whose weakness at three scenarios is stated,
not hidden. ERROR rows stay in every denominator, as in `report`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import Field

from evalkit import stats
from evalkit.compare.sides import (
    FACTORS,
    Side,
    confounded,
    differing,
    other_backends,
    other_neighbours,
    pooled_agents,
    pooled_backends,
    pooled_subjects,
    with_scenarios,
)
from evalkit.errors import RefusedError
from evalkit.inference import sequential as seq
from evalkit.inference import variance
from evalkit.models import Level, Model, Polarity, ResultRow, ScenarioSet
from evalkit.records.folder.imported import imported_problem
from evalkit.suite.config import Suite
from evalkit.suite.lock import Lock, folder_label, read_lock

COMPARE_SCHEMA_VERSION = 1
ALPHA = 0.05
CHANGE = 0.2
SETS: tuple[ScenarioSet, ...] = ("run", "reserve")
LEVELS: tuple[Level, ...] = ("L1", "L2", "L3")
POLARITIES: tuple[Polarity, ...] = ("positive", "negative")
MEASURE = {"positive": "recall", "negative": "specificity"}
PER_REP = "per-rep"
PER_SCENARIO = "per-scenario"
PER_REP_TEST = "Fisher exact, two-sided; Newcombe score interval (reps as independent)"
PER_SCENARIO_TEST = "exact sign-flip permutation over scenarios, two-sided"


class Count(Model):
    k: int = Field(description="PASS rows")
    n: int = Field(description="PASS + FAIL + ERROR rows")
    errors: int = Field(description="ERROR rows, inside n")


class Power(Model):
    """What the current n could detect, so that 'no difference' can be weighed."""

    rate_used: float | None = Field(description="A's observed rate the change is measured from")
    change: float = CHANGE
    reps_per_side: int | None = Field(
        description=f"reps per side for 80 % power at alpha {ALPHA}, two-sided"
    )


class DifferenceNoise(Model):
    """Where the noise of a paired B - A comes from, and the next grid that narrows it most."""

    scenarios: int
    mean_reps: float = Field(description="reps per scenario and side, on average")
    between: float = Field(description="variance of the scenarios' true differences")
    within_a: float = Field(description="A's rep-to-rep variance within a scenario")
    within_b: float = Field(description="B's rep-to-rep variance within a scenario")
    new_reps: int = Field(description="the reps a side the allocation spends")
    best_scenarios: int = Field(description="scenarios of the best next grid")
    best_reps: float = Field(description="reps per scenario and side of the best next grid")
    narrowing: float = Field(description="how much it narrows the interval, as a share")
    next_grid: str


class Entry(Model):
    """One cell (set x level x polarity, or a polarity pooled over levels) and one analysis."""

    set: ScenarioSet
    level: str = Field(description="L1, L2, L3, or all")
    polarity: Polarity
    measure: str = Field(description="recall (positives) or specificity (negatives)")
    analysis: Literal["per-rep", "per-scenario"]
    a: Count
    b: Count
    difference: float | None = Field(description="B - A; null when a side is empty")
    interval: list[float] | None = Field(description="95 % interval of B - A; null if undefined")
    p_value: float | None
    test: str
    scenarios: int | None = Field(None, description="per-scenario: scenarios both sides ran")
    p_floor: float | None = Field(None, description="per-scenario: the smallest reachable p")
    power: Power | None = Field(None, description="per-rep: what this n could detect")
    note: str = ""
    error_bounds: list[float] | None = Field(
        None,
        description="B - A with B's ERROR rows non-passes and A's passes, then the reverse: "
        "how far the ERROR rows could move it; null when a side is empty",
    )
    better_p: float | None = Field(
        None,
        description="per-scenario, with --min-delta D: one-sided p against 'B - A <= D' "
        "(sign-flip of d_s - D, or the stratified score test at few reps)",
    )
    better: str = Field("", description="per-scenario, with --min-delta: what the test showed")
    noise: DifferenceNoise | None = Field(
        None, description="per-scenario: where the difference's noise comes from"
    )
    sequential_p: float | None = Field(
        None,
        description="per-scenario, with --sequential: the two-sided anytime-valid p over paired "
        "reps in recorded order (1 / the e-process's running maximum)",
    )


class SideSummary(Model):
    label: str
    workdir: str
    selector: str
    rows: int
    errors: int
    factors: dict[str, list[str]]
    baseline: bool = Field(False, description="the suite's recorded baseline")
    sets: dict[str, str] = Field(
        default_factory=dict,
        description="run / reserve -> contamination label of this side's rows, by variant",
    )


class Comparison(Model):
    schema_version: int = COMPARE_SCHEMA_VERSION
    suite: str
    a: SideSummary
    b: SideSummary
    differing: list[str] = Field(description="factors whose values differ between A and B")
    confounded: bool = Field(
        description="more than one factor differs, or a side pools more than one subject"
    )
    notes: list[str]
    min_delta: float | None = Field(None, description="the floor D on 'better', when asked")
    comparisons: list[Entry]


PER_REP_NOTE = "treats reps as independent: optimistic when scenarios differ"


def _count(rows: list[ResultRow]) -> Count:
    return Count(
        k=sum(1 for r in rows if r.verdict == "PASS"),
        n=len(rows),
        errors=sum(1 for r in rows if r.verdict == "ERROR"),
    )


def _bounds(a: Count, b: Count) -> list[float] | None:
    found = stats.difference_bounds((b.k, b.errors, b.n), (a.k, a.errors, a.n))
    return list(found) if found else None


def better_sentence(p: float | None, min_delta: float) -> str:
    if p is None:
        return f"cannot tell whether better by more than {min_delta:g}"
    if p <= ALPHA:
        return f"better by more than {min_delta:g} (one-sided p = {p:.3g})"
    return f"not shown better by more than {min_delta:g} (one-sided p = {p:.3g})"


def per_rep(
    where: tuple[ScenarioSet, str, Polarity], a: list[ResultRow], b: list[ResultRow]
) -> Entry:
    ca, cb = _count(a), _count(b)
    both = ca.n > 0 and cb.n > 0
    interval = stats.newcombe_difference(ca.k, ca.n, cb.k, cb.n)
    base = ca.k / ca.n if ca.n else None
    return Entry(
        set=where[0],
        level=where[1],
        polarity=where[2],
        measure=MEASURE[where[2]],
        analysis=PER_REP,
        a=ca,
        b=cb,
        difference=cb.k / cb.n - ca.k / ca.n if both else None,
        interval=list(interval) if interval else None,
        error_bounds=_bounds(ca, cb),
        p_value=stats.fisher_exact(ca.k, ca.n, cb.k, cb.n),
        test=PER_REP_TEST,
        power=Power(
            rate_used=base,
            reps_per_side=stats.reps_per_side(base, CHANGE, ALPHA) if base is not None else None,
        ),
        note=PER_REP_NOTE,
    )


def floor_sentence(k: int) -> str:
    floor = stats.sign_flip_floor(k)
    if floor <= ALPHA:
        return f"{k} scenarios can reach p = {floor:.3g}"
    need = stats.scenarios_for(ALPHA)
    return (
        f"{k} scenarios cannot reach {ALPHA} (smallest p = {floor:.3g}): this design cannot "
        f"show a difference at that level; {need} could "
        f"(smallest p = {stats.sign_flip_floor(need):.3g})"
    )


def per_scenario(
    where: tuple[ScenarioSet, str, Polarity],
    a: dict[str, list[ResultRow]],
    b: dict[str, list[ResultRow]],
    min_delta: float | None = None,
    new_reps: int | None = None,
    sequential: bool = False,
) -> Entry | None:
    """The paired analysis over the scenarios both sides ran; None for fewer than two."""
    shared = sorted(s for s in set(a) & set(b) if a[s] and b[s])
    if len(shared) < 2:
        return None
    counts = [(_count(a[s]), _count(b[s])) for s in shared]
    diffs = [Fraction(cb.k, cb.n) - Fraction(ca.k, ca.n) for ca, cb in counts]
    k = len(shared)
    ends = [_bounds(ca, cb) or [0.0, 0.0] for ca, cb in counts]
    better_p = None
    if min_delta is not None:
        cells = [(cb.k, cb.n, ca.k, ca.n) for ca, cb in counts]
        better_p = stats.superiority_p(cells, min_delta)[0]
    return Entry(
        set=where[0],
        level=where[1],
        polarity=where[2],
        measure=MEASURE[where[2]],
        analysis=PER_SCENARIO,
        a=_count([r for s in shared for r in a[s]]),
        b=_count([r for s in shared for r in b[s]]),
        difference=float(sum(diffs) / k),
        interval=None,
        p_value=stats.sign_flip_p(diffs),
        test=PER_SCENARIO_TEST,
        scenarios=k,
        p_floor=stats.sign_flip_floor(k),
        note=floor_sentence(k),
        error_bounds=[sum(e[0] for e in ends) / k, sum(e[1] for e in ends) / k],
        better_p=better_p,
        better="" if min_delta is None else better_sentence(better_p, min_delta),
        noise=difference_noise([(cb.k, cb.n, ca.k, ca.n) for ca, cb in counts], new_reps),
        sequential_p=_sequential_p(a, b, shared) if sequential else None,
    )


def _sequential_p(
    a: dict[str, list[ResultRow]], b: dict[str, list[ResultRow]], shared: list[str]
) -> float:
    def passes(rows: list[ResultRow]) -> list[int]:
        return [int(r.verdict == "PASS") for r in rows]

    signs = seq.paired_signs([passes(a[s]) for s in shared], [passes(b[s]) for s in shared])
    return seq.anytime_p(signs, two_sided=True)


def difference_noise(
    cells: list[tuple[int, int, int, int]], new_reps: int | None
) -> DifferenceNoise | None:
    """The difference's components and the best allocation of `new_reps` more reps a side
    (as many as the cell holds now, when not given)."""
    c = variance.difference(cells)
    if c is None:
        return None
    spend = new_reps if new_reps is not None else round(c.scenarios * c.mean_reps)
    best = variance.allocate(c, spend)
    return DifferenceNoise(
        scenarios=c.scenarios,
        mean_reps=c.mean_reps,
        between=c.between,
        within_a=c.within_a,
        within_b=c.within_b,
        new_reps=spend,
        best_scenarios=best.scenarios,
        best_reps=best.reps,
        narrowing=best.narrowing,
        next_grid=variance.difference_sentence(c, spend),
    )


Groups = dict[tuple[ScenarioSet, str, Polarity], dict[str, list[ResultRow]]]
"""Keyed by the ladder level, or by the scenario's kind in a suite without a ladder."""


def _group(suite: Suite, rows: list[ResultRow], unknown: set[str]) -> Groups:
    groups: Groups = {}
    for row, sf in with_scenarios(suite, rows, unknown):
        s = sf.scenario
        group = s.level or s.kind or "-"
        groups.setdefault((s.set, group, s.polarity), {}).setdefault(sf.id, []).append(row)
    return groups


def _flat(by_scenario: dict[str, list[ResultRow]]) -> list[ResultRow]:
    return [r for rows in by_scenario.values() for r in rows]


def entries(
    suite: Suite,
    a: list[ResultRow],
    b: list[ResultRow],
    unknown: set[str],
    min_delta: float | None = None,
    new_reps: int | None = None,
    sequential: bool = False,
) -> list[Entry]:
    ga, gb = _group(suite, a, unknown), _group(suite, b, unknown)
    kinds = sorted({k[1] for k in (*ga, *gb)} - set(LEVELS))
    found: list[Entry] = []
    for which in SETS:
        for polarity in POLARITIES:
            pooled_a: dict[str, list[ResultRow]] = {}
            pooled_b: dict[str, list[ResultRow]] = {}
            for level in [*LEVELS, *kinds]:
                key = (which, level, polarity)
                if key not in ga and key not in gb:
                    continue
                sa, sb = ga.get(key, {}), gb.get(key, {})
                pooled_a.update(sa)
                pooled_b.update(sb)
                found.append(per_rep((which, level, polarity), _flat(sa), _flat(sb)))
                paired = per_scenario(
                    (which, level, polarity), sa, sb, min_delta, new_reps, sequential
                )
                if paired is not None:
                    found.append(paired)
            if pooled_a or pooled_b:
                where = (which, "all", polarity)
                found.append(per_rep(where, _flat(pooled_a), _flat(pooled_b)))
                paired = per_scenario(where, pooled_a, pooled_b, min_delta, new_reps, sequential)
                if paired is not None:
                    found.append(paired)
    return found


def _summary(side: Side, lock: Lock | None) -> SideSummary:
    variants = {side.variant(r) for r in side.rows}
    return SideSummary(
        label=side.label,
        workdir=str(side.workdir),
        selector=side.selector,
        rows=len(side.rows),
        errors=sum(1 for r in side.rows if r.verdict == "ERROR"),
        factors={name: sorted(values) for name, values in side.factor_values().items()},
        baseline=side.baseline,
        sets={which: folder_label(lock, which, variants) for which in SETS},
    )


def errors_note(sa: SideSummary, sb: SideSummary) -> str:
    """The ERROR rows of each side, and the exact test of their shares against each other."""
    p = stats.fisher_exact(sa.errors, sa.rows, sb.errors, sb.rows)
    return (
        f"ERROR rows: A {sa.errors}/{sa.rows}, B {sb.errors}/{sb.rows}; counted in n and "
        f"never as passes; the shares differ by Fisher exact p = {p:.3g}"
    )


def _refusals(
    a: Side, b: Side, differ: list[str], allow_confounded: bool, allow_backends: bool
) -> tuple[list[tuple[Side, str]], list[str]]:
    """Refuse a comparison no one factor explains, unless the caller allowed it; what it
    allowed, returned to be named: the pooled subjects, and the pooled agents and sandboxes."""
    differ = differing(a, b)
    neighbours = other_neighbours(a, b, differ)
    if neighbours is not None:
        raise RefusedError(neighbours)
    backends = other_backends(a, b, differ, allow_backends)
    if backends is not None and not allow_backends:
        raise RefusedError(backends)
    if confounded(differ) and not allow_confounded:
        raise RefusedError(
            f"A and B differ in {', '.join(differ)}: a difference could not be put down to "
            "one of them; pass --allow-confounded to compare anyway"
        )
    pooled = [(side, why) for side in (a, b) if (why := pooled_subjects(side)) is not None]
    if pooled and not allow_confounded:
        narrow = " or ".join(f"--{side.label.lower()} variant:NAME" for side, _ in pooled)
        raise RefusedError(
            f"{'; '.join(why for _, why in pooled)}: its rate belongs to no one wording; "
            f"narrow it with {narrow}, or pass --allow-confounded to compare anyway"
        )
    agents = [why for side in (a, b) if (why := pooled_agents(side)) is not None]
    if agents and not allow_confounded:
        raise RefusedError(
            f"{'; '.join(agents)}: its rate belongs to no one agent; pass --allow-confounded "
            "to compare anyway"
        )
    sandboxes = [why for side in (a, b) if (why := pooled_backends(side)) is not None]
    if sandboxes and not allow_backends:
        raise RefusedError(
            f"{'; '.join(sandboxes)}: its rate belongs to no one sandbox; pass "
            "--allow-backends to compare anyway"
        )
    agents += [*sandboxes, *([backends] if backends is not None else [])]
    return pooled, agents


def compare(
    suite: Suite,
    a: Side,
    b: Side,
    allow_confounded: bool = False,
    min_delta: float | None = None,
    new_reps: int | None = None,
    sequential: bool = False,
    allow_backends: bool = False,
) -> Comparison:
    """Both sides analysed cell by cell; refused when more than one factor differs, unless
    the caller accepts a confounded comparison (which then says which factors differ)."""
    differ = differing(a, b)
    pooled, agents = _refusals(a, b, differ, allow_confounded, allow_backends)
    unknown: set[str] = set()
    found = entries(suite, a.rows, b.rows, unknown, min_delta, new_reps, sequential)
    lock = read_lock(suite)
    sa, sb = _summary(a, lock), _summary(b, lock)
    notes = [f"CONFOUNDED: {why}" for why in [*(w for _, w in pooled), *agents]]
    if confounded(differ):
        notes.append(f"CONFOUNDED: A and B differ in {', '.join(differ)}")
    elif differ:
        notes.append(f"A and B differ in {differ[0]}" + ("" if pooled else " only"))
    elif not pooled:
        notes.append(
            "A and B differ in none of " + ", ".join(FACTORS) + ": any difference is chance"
        )
    if sa.errors or sb.errors:
        notes.append(errors_note(sa, sb))
    if unknown:
        notes.append("left out, no longer in the suite: " + ", ".join(sorted(unknown)))
    notes += [
        f"IMPORTED: {side.label} {why}"
        for side in (a, b)
        if (why := imported_problem(side.workdir)) is not None
    ]
    return Comparison(
        suite=suite.name,
        a=sa,
        b=sb,
        differing=differ,
        confounded=confounded(differ) or bool(pooled) or bool(agents),
        notes=notes,
        min_delta=min_delta,
        comparisons=found,
    )

"""Where a rate's noise comes from: a one-way random-effects ANOVA by scenario.

Each rep is a 0/1 outcome (an ERROR is not a pass, as in every rate); scenarios are the
groups. The method-of-moments estimates (unbalanced, Searle, Casella & McCulloch 1992, §3.6)
split the variance into a between-scenario part (which scenarios were written) and a
within-scenario part (rep to rep, same scenario); the between part is truncated at 0. From
them: the intraclass correlation, the design effect 1 + (m̄ - 1)·ICC, the effective sample
size, and what more scenarios or more reps would buy for the next grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalkit import stats

FEW_SCENARIOS = 5
"""Below this many scenarios the between-scenario variance rests on too few groups to trust."""


@dataclass(frozen=True)
class Components:
    """One cell's variance components, with the mean squares they came from."""

    scenarios: int
    reps: int
    mean_reps: float
    ms_between: float
    ms_within: float
    n0: float
    between: float
    within: float
    icc: float | None
    deff: float
    effective_n: float


def one_way(counts: Sequence[tuple[int, int]]) -> Components | None:
    """The components from (passes, reps) per scenario; None below two scenarios, or where
    no scenario has a second rep (no within-scenario spread to measure)."""
    cells = [(k, n) for k, n in counts if n > 0]
    g = len(cells)
    total = sum(n for _, n in cells)
    if g < 2 or total <= g:
        return None
    grand = sum(k for k, _ in cells) / total
    ss_between = sum(n * (k / n - grand) ** 2 for k, n in cells)
    ss_within = sum(k * (1 - k / n) for k, n in cells)
    ms_between = ss_between / (g - 1)
    ms_within = ss_within / (total - g)
    n0 = (total - sum(n * n for _, n in cells) / total) / (g - 1)
    between = max(0.0, (ms_between - ms_within) / n0)
    spread = between + ms_within
    icc = between / spread if spread > 0 else None
    mean_reps = total / g
    deff = 1 + (mean_reps - 1) * (icc or 0.0)
    return Components(
        scenarios=g,
        reps=total,
        mean_reps=mean_reps,
        ms_between=ms_between,
        ms_within=ms_within,
        n0=n0,
        between=between,
        within=ms_within,
        icc=icc,
        deff=deff,
        effective_n=total / deff,
    )


def mean_variance(between: float, within: float, scenarios: int, reps: float) -> float:
    """The variance of a mean over `scenarios` scenarios of `reps` reps each."""
    return (between + within / reps) / scenarios


def narrowing(now: float, then: float) -> float:
    """How much an interval's width shrinks from variance `now` to `then`, as a share."""
    return 0.0 if now <= 0 else 1 - (then / now) ** 0.5


def floor_caveat(scenarios: int, alpha: float = 0.05) -> str:
    """What the number of scenarios alone rules out, or empty."""
    parts = []
    if scenarios < FEW_SCENARIOS:
        parts.append(f"{scenarios} scenarios make the between-scenario share a rough estimate")
    floor = stats.one_sided_floor(scenarios)
    if floor > alpha:
        parts.append(
            f"with {scenarios} scenarios the exact test cannot go below 2^-{scenarios} = "
            f"{floor:.3g} > {alpha:g}: no number of reps makes it decide"
        )
    return "; ".join(parts)


def next_grid(c: Components, alpha: float = 0.05) -> str:
    """The one sentence for the next grid: as many new reps spent on new scenarios (at the
    same reps each) or on more reps of these, and how much each narrows the interval."""
    g, m = c.scenarios, c.mean_reps
    now = mean_variance(c.between, c.within, g, m)
    if now <= 0:
        sentence = "no spread yet: every rep of every scenario agrees"
    else:
        wider = narrowing(now, mean_variance(c.between, c.within, 2 * g, m))
        deeper = narrowing(now, mean_variance(c.between, c.within, g, 2 * m))
        spend = round(g * m)
        sentence = (
            f"next grid: {g} more scenarios ({spend} reps) would narrow the interval by "
            f"{wider:.0%}, {m:.3g} more reps of each ({spend} reps) by {deeper:.0%}"
        )
    caveat = floor_caveat(g, alpha)
    return f"{sentence}; {caveat}" if caveat else sentence


@dataclass(frozen=True)
class DifferenceComponents:
    """Where the noise of a paired mean difference B - A comes from: the scenarios' true
    differences spreading (between), and each arm's rep-to-rep variance (within)."""

    scenarios: int
    mean_reps: float
    between: float
    within_a: float
    within_b: float

    def variance(self, scenarios: int, reps: float) -> float:
        """The mean difference's variance over `scenarios` scenarios of `reps` reps a side."""
        return (self.between + (self.within_a + self.within_b) / reps) / scenarios


def _pooled_within(cells: Sequence[tuple[int, int]]) -> float | None:
    total, g = sum(n for _, n in cells), len(cells)
    if total <= g:
        return None
    return sum(k * (1 - k / n) for k, n in cells) / (total - g)


def difference(pairs: Sequence[tuple[int, int, int, int]]) -> DifferenceComponents | None:
    """The components from (k_B, n_B, k_A, n_A) per scenario (method of moments): each arm's
    within-scenario variance pooled over scenarios, and the between part the observed spread
    of d_s leaves once the reps' own noise in it is taken away, truncated at 0. None below two
    scenarios, or where an arm has no second rep anywhere."""
    usable = [p for p in pairs if p[1] > 0 and p[3] > 0]
    g = len(usable)
    if g < 2:
        return None
    within_b = _pooled_within([(p[0], p[1]) for p in usable])
    within_a = _pooled_within([(p[2], p[3]) for p in usable])
    if within_a is None or within_b is None:
        return None
    diffs = [k_b / n_b - k_a / n_a for k_b, n_b, k_a, n_a in usable]
    mean = sum(diffs) / g
    spread = sum((d - mean) ** 2 for d in diffs) / (g - 1)
    rep_noise = sum(within_b / p[1] + within_a / p[3] for p in usable) / g
    reps = sum(p[1] + p[3] for p in usable) / (2 * g)
    return DifferenceComponents(g, reps, max(0.0, spread - rep_noise), within_a, within_b)


@dataclass(frozen=True)
class Allocation:
    """The next grid that narrows the difference's interval most for `new_reps` a side."""

    new_reps: int
    scenarios: int = 0
    reps: float = 0.0
    narrowing: float = 0.0


def allocate(c: DifferenceComponents, new_reps: int) -> Allocation:
    """Every split of `new_reps` more reps a side between more reps of each present scenario
    and new scenarios (at the same, raised, reps each), and the one that narrows most."""
    g, m = c.scenarios, c.mean_reps
    now = c.variance(g, m)
    best = Allocation(new_reps, g, m, 0.0)
    for extra in range(new_reps // g + 1):
        reps = m + extra
        more = int((new_reps - extra * g) // reps)
        shrink = narrowing(now, c.variance(g + more, reps))
        if shrink > best.narrowing + 1e-12:
            best = Allocation(new_reps, g + more, reps, shrink)
    return best


def difference_sentence(c: DifferenceComponents, new_reps: int, alpha: float = 0.05) -> str:
    """The next grid for a difference: the best allocation of `new_reps` a side."""
    if c.variance(c.scenarios, c.mean_reps) <= 0:
        sentence = "no spread yet in B - A"
    else:
        best = allocate(c, new_reps)
        sentence = (
            f"next grid: of {new_reps} more reps a side, {best.scenarios} scenarios x "
            f"{best.reps:.3g} reps ({best.scenarios - c.scenarios} new, "
            f"{best.reps - c.mean_reps:.3g} more reps each) narrow the interval most, by "
            f"{best.narrowing:.0%}"
        )
    caveat = floor_caveat(c.scenarios, alpha)
    return f"{sentence}; {caveat}" if caveat else sentence

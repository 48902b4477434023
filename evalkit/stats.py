"""The statistics evalkit reports (`report`, `compare`, `gate`, `bisect`): exact at small
counts, standard library only; below every layer that reads rows.

Suites are small (a few scenarios per polarity, a few reps each), so every test here is
exact or score-based rather than a normal approximation that misbehaves at 0/n and n/n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)
# Probabilities within this relative distance of the observed table's count as "as extreme";
# the same tolerance R's fisher.test uses, so ties are not lost to rounding.
_REL_TOL = 1e-7


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k of n; None when n is 0."""
    if n == 0:
        return None
    p = k / n
    scale = 1 + z * z / n
    center = (p + z * z / (2 * n)) / scale
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / scale
    return max(0.0, center - half), min(1.0, center + half)


def newcombe_difference(
    k1: int, n1: int, k2: int, n2: int, z: float = Z95
) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval (his method 10) for p2 - p1, from the two Wilson
    intervals; None when either side is empty."""
    first, second = wilson(k1, n1, z), wilson(k2, n2, z)
    if first is None or second is None:
        return None
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = first
    l2, u2 = second
    d = p2 - p1
    low = d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return max(-1.0, low), min(1.0, high)


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> float | None:
    """Two-sided Fisher exact p for the 2x2 table [[k1, n1-k1], [k2, n2-k2]]: the sum of the
    probabilities of every table with the same margins no more likely than the observed one.
    None when either side is empty."""
    if n1 == 0 or n2 == 0:
        return None
    successes = k1 + k2
    total = n1 + n2
    denominator = math.comb(total, successes)
    low, high = max(0, successes - n2), min(n1, successes)

    def weight(x: int) -> int:
        return math.comb(n1, x) * math.comb(n2, successes - x)

    observed = weight(k1)
    limit = observed * (1 + _REL_TOL)
    extreme = sum(w for x in range(low, high + 1) if (w := weight(x)) <= limit)
    return min(1.0, extreme / denominator)


def sign_flip_p(differences: Sequence[Fraction]) -> float | None:
    """Exact two-sided sign-flip permutation p for the mean of paired differences: the share
    of all 2^k sign assignments whose |sum| is at least the observed |sum|.

    Counted exactly over every assignment (a convolution over integer sums, so k is not
    limited by 2^k enumeration). None when there are no pairs."""
    if not differences:
        return None
    scale = math.lcm(*(d.denominator for d in differences))
    values = [abs(int(d * scale)) for d in differences]
    observed = abs(sum(int(d * scale) for d in differences))
    counts: dict[int, int] = {0: 1}
    for value in values:
        step: dict[int, int] = {}
        for total, ways in counts.items():
            for signed in (value, -value):
                step[total + signed] = step.get(total + signed, 0) + ways
        counts = step
    extreme = sum(ways for total, ways in counts.items() if abs(total) >= observed)
    return float(extreme) / float(2 ** len(values))


def sign_flip_floor(k: int) -> float:
    """The smallest two-sided p that k paired scenarios can reach: 2 / 2^k."""
    return min(1.0, 2.0 / float(2**k))


def scenarios_for(alpha: float = 0.05) -> int:
    """The fewest paired scenarios whose sign-flip floor is at or below alpha."""
    k = 1
    while sign_flip_floor(k) > alpha:
        k += 1
    return k


def target_rate(base: float, change: float = 0.2) -> float:
    """The rate a `change`-point shift from base reaches: upward unless that passes 1."""
    return base + change if base + change <= 1.0 else base - change


def reps_per_side(base: float, change: float = 0.2, alpha: float = 0.05, power: float = 0.8) -> int:
    """Reps per side for a two-sided two-proportion test (normal approximation, no continuity
    correction, as in Fleiss) to detect base -> base±change with the given power."""
    other = target_rate(base, change)
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_beta = NormalDist().inv_cdf(power)
    mean = (base + other) / 2
    spread = z_alpha * math.sqrt(2 * mean * (1 - mean)) + z_beta * math.sqrt(
        base * (1 - base) + other * (1 - other)
    )
    return math.ceil(spread**2 / (base - other) ** 2)


# --------------------------------------------------------------------------- the gate's test


def _integer_scale(values: Sequence[Fraction]) -> tuple[list[int], int]:
    scale = math.lcm(*(v.denominator for v in values)) if values else 1
    return [int(v * scale) for v in values], scale


def _sign_sums(magnitudes: Sequence[int]) -> dict[int, int]:
    """How many of the 2^G sign assignments give each signed total of the magnitudes."""
    counts: dict[int, int] = {0: 1}
    for value in magnitudes:
        step: dict[int, int] = {}
        for total, ways in counts.items():
            for signed in (value, -value):
                step[total + signed] = step.get(total + signed, 0) + ways
        counts = step
    return counts


def sign_flip_lower_p(differences: Sequence[Fraction]) -> float | None:
    """Exact one-sided sign-flip (Fisher-Pitman randomisation) p against "the differences lean
    negative": the share of the 2^G assignments ε with Σ ε_s|d_s| ≤ Σ d_s. None for no pairs."""
    if not differences:
        return None
    values, _ = _integer_scale(differences)
    observed = sum(values)
    counts = _sign_sums([abs(v) for v in values])
    return sum(w for total, w in counts.items() if total <= observed) / float(2 ** len(values))


def sign_flip_upper_p(differences: Sequence[Fraction]) -> float | None:
    """The mirror of `sign_flip_lower_p`: evidence that the differences lean positive."""
    return sign_flip_lower_p([-d for d in differences])


def restricted_rates(k_b: int, n_b: int, k_a: int, n_a: int, shift: float) -> tuple[float, float]:
    """The likelihood's best rates (B's, A's) for one scenario under rate_B - rate_A = shift:
    Miettinen and Nurminen's closed form (Stat. Med. 4, 1985) of Farrington and Manning's
    restricted estimate (Stat. Med. 9, 1990)."""
    p_b, p_a = k_b / n_b, k_a / n_a
    theta = n_a / n_b
    a = 1 + theta
    b = -(1 + theta + p_b + theta * p_a + shift * (theta + 2))
    c = shift * shift + shift * (2 * p_b + theta + 1) + p_b + theta * p_a
    d = -p_b * shift * (1 + shift)
    v = b**3 / (3 * a) ** 3 - b * c / (6 * a * a) + d / (2 * a)
    u = math.copysign(math.sqrt(max(b * b / (3 * a) ** 2 - c / (3 * a), 0.0)), v)
    if u == 0.0:
        rate_b = -b / (3 * a)
    else:
        w = (math.pi + math.acos(max(-1.0, min(1.0, v / u**3)))) / 3
        rate_b = 2 * u * math.cos(w) - b / (3 * a)
    rate_b = min(1.0, max(0.0, rate_b))
    return rate_b, min(1.0, max(0.0, rate_b - shift))


def within_margin_p(cells: Sequence[tuple[int, int, int, int]], margin: float) -> float | None:
    """One-sided p against "B is at least `margin` worse than A", from (k_B, n_B, k_A, n_A) per
    scenario: a score test stratified by scenario, Σ(d_s + M) over the root of Σ of each
    scenario's variance at its restricted rates (B exactly M worse), referred to t on G - 1 df.

    The variance is taken where the null puts the rates, not where they were seen: at two or
    three reps a scenario of A and B passing every rep shows d_s = 0 and no spread, yet B
    M worse would show that often. A sign-flip test of d_s + M reads those zeros as +M and
    shows B within M far more often than alpha; this test holds its size (see the unit tests).
    None below two scenarios."""
    usable = [c for c in cells if c[1] > 0 and c[3] > 0]
    if len(usable) < 2:
        return None
    total = sum(k_b / n_b - k_a / n_a + margin for k_b, n_b, k_a, n_a in usable)
    variance = 0.0
    for k_b, n_b, k_a, n_a in usable:
        rate_b, rate_a = restricted_rates(k_b, n_b, k_a, n_a, -margin)
        variance += rate_b * (1 - rate_b) / n_b + rate_a * (1 - rate_a) / n_a
    if variance <= 0.0:
        return 1.0 if total <= 0 else 0.0
    return 1.0 - t_cdf(total / math.sqrt(variance), len(usable) - 1)


def one_sided_floor(g: int) -> float:
    """The smallest one-sided sign-flip p that G pairs can reach: 1 / 2^G."""
    return 1.0 / float(2**g)


def pairs_needed(tests: int, alpha: float) -> int:
    """The fewest pairs whose one-sided floor reaches alpha / tests: ⌈log₂(tests / alpha)⌉."""
    g = 0
    while one_sided_floor(g) > alpha / tests:
        g += 1
    return g


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections at family-wise level alpha, in the order given."""
    m = len(p_values)
    rejected = [False] * m
    for step, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        if p_values[index] > alpha / (m - step):
            break
        rejected[index] = True
    return rejected


# --------------------------------------------------------------------------- clustered rates


def wilson_at(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a rate p on a (possibly fractional) size n > 0."""
    scale = 1 + z * z / n
    center = (p + z * z / (2 * n)) / scale
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / scale
    return max(0.0, center - half), min(1.0, center + half)


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def beta_quantile(q: float, a: float, b: float) -> float:
    """The x with I_x(a, b) = q (0 < q < 1; a, b > 0): Newton steps on the incomplete beta,
    each kept inside a shrinking bracket so that a wild step bisects instead."""
    low, high = 0.0, 1.0
    x = a / (a + b)
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    for _ in range(100):
        error = incomplete_beta(a, b, x) - q
        if error < 0:
            low = x
        else:
            high = x
        if abs(error) < 1e-13 or high - low <= 1e-13 * high:
            break
        density = math.exp(log_norm + (a - 1) * math.log(x) + (b - 1) * math.log1p(-x))
        step = x - error / density if density > 0 else -1.0
        x = step if low < step < high else (low + high) / 2
    return x


def t_cdf(t: float, df: float) -> float:
    tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile (0.5 < q < 1): Newton steps on the CDF inside a bracket that
    bisects whenever a step would leave it."""
    low, high = 0.0, 1.0
    while t_cdf(high, df) < q:
        high *= 2
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    x = (low + high) / 2
    for _ in range(200):
        error = t_cdf(x, df) - q
        if error < 0:
            low = x
        else:
            high = x
        if abs(error) < 1e-15 or high - low <= 1e-14 * high:
            break
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(x * x / df))
        step = x - error / density
        x = step if low < step < high else (low + high) / 2
    return x


@dataclass(frozen=True)
class Clustered:
    """A pooled rate's scenario-clustered 95 % interval and what it was drawn from."""

    low: float
    high: float
    deff: float = field(metadata={"doc": "design effect, clamped to [1, mean reps per scenario]"})
    scenarios: int
    variance: float = field(metadata={"doc": "the cluster-robust variance of the rate"})


@lru_cache(maxsize=2048)
def _t975(df: int) -> float:
    return t_quantile(0.975, df)


def clustered_interval(counts: Sequence[tuple[int, int]]) -> Clustered | None:
    """The scenario-clustered 95 % interval of a pooled rate, from (passes, reps) per scenario.

    Korn & Graubard's interval (1998): the cluster-robust variance gives a design effect,
    clamped to [1, mean reps per scenario]; the effective size N / deff takes the
    degrees-of-freedom step (times (t on N - 1 df / t on G - 1 df)^2); and the bounds are the
    Clopper-Pearson (beta) bounds for the rate on that size, as R survey's
    `svyciprop(method = "beta")` draws them. Not the Wilson form on the same size: near 0 or 1
    a few scenarios can show almost no spread, the design effect then reads as 1, and Wilson's
    lower bound sits above the true rate too often (the beta bounds hold 95 %). At 0 or 1 the
    reps are taken as fully correlated (n* = G, Wilson with z). None below two scenarios: one
    scenario has no spread to measure.
    """
    cells = [(k, n) for k, n in counts if n > 0]
    g = len(cells)
    if g < 2:
        return None
    total = sum(n for _, n in cells)
    p = sum(k for k, _ in cells) / total
    mean_size = total / g
    robust = g / (g - 1) * sum((k - p * n) ** 2 for k, n in cells) / (total * total)
    if p in (0.0, 1.0):
        low, high = wilson_at(p, g)
        return Clustered(low, high, mean_size, g, robust)
    deff = min(max(robust / (p * (1 - p) / total), 1.0), mean_size)
    size = total / deff * (_t975(total - 1) / _t975(g - 1)) ** 2
    passes = p * size
    low = beta_quantile(0.025, passes, size - passes + 1)
    high = beta_quantile(0.975, passes + 1, size - passes)
    return Clustered(low, high, deff, g, robust)


def fisher_greater(k1: int, n1: int, k2: int, n2: int) -> float | None:
    """One-sided Fisher exact p that the first rate exceeds the second: the probability,
    given the margins, of a first-row count at least k1. None when either side is empty."""
    if n1 == 0 or n2 == 0:
        return None
    successes = k1 + k2
    denominator = math.comb(n1 + n2, successes)
    high = min(n1, successes)
    total = sum(math.comb(n1, x) * math.comb(n2, successes - x) for x in range(k1, high + 1))
    return min(1.0, total / denominator)


# --------------------------------------------------------------------------- better by D

SIGN_FLIP_REPS = 10
"""Reps per side and scenario from which the superiority test is the sign-flip test of
d_s - D; below it the per-scenario rates are too coarse for d_s - D to be symmetric about 0
under the null, and the stratified score test is used instead."""


def superiority_p(
    cells: Sequence[tuple[int, int, int, int]], min_delta: float
) -> tuple[float | None, str]:
    """One-sided p against "B is at most D better than A" from (k_B, n_B, k_A, n_A) per
    scenario, and which test gave it: the exact sign-flip test of d_s - D when every scenario
    has at least `SIGN_FLIP_REPS` reps a side, else the stratified score test at the
    restricted rates B - A = D (`within_margin_p` with the margin -D)."""
    usable = [c for c in cells if c[1] > 0 and c[3] > 0]
    if usable and min(min(c[1], c[3]) for c in usable) >= SIGN_FLIP_REPS:
        floor = Fraction(str(min_delta))
        diffs = [Fraction(k_b, n_b) - Fraction(k_a, n_a) - floor for k_b, n_b, k_a, n_a in usable]
        return sign_flip_upper_p(diffs), "sign-flip"
    return within_margin_p(usable, -min_delta), "score"


# --------------------------------------------------------------------------- ERROR rows' reach


def error_bounds(k: int, errors: int, n: int) -> tuple[float, float] | None:
    """A rate with every ERROR row a non-pass (as counted) and with every one a pass."""
    return (k / n, (k + errors) / n) if n else None


def difference_bounds(
    b: tuple[int, int, int], a: tuple[int, int, int]
) -> tuple[float, float] | None:
    """B - A over (k, errors, n) a side, at the two ends the ERROR rows allow: B's a non-pass
    and A's a pass, then the reverse. None when a side is empty."""
    rb, ra = error_bounds(*b), error_bounds(*a)
    if rb is None or ra is None:
        return None
    return rb[0] - ra[1], rb[1] - ra[0]

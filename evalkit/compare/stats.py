"""The statistics `evalkit compare` reports: exact at small counts, standard library only.

Suites are small (a few scenarios per polarity, a few reps each), so every test here is
exact or score-based rather than a normal approximation that misbehaves at 0/n and n/n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
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

"""The gate's one-sided sign-flip test, its margin test, Holm, and the t quantile they lean on."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from evalkit.stats import (
    holm,
    one_sided_floor,
    pairs_needed,
    restricted_rates,
    sign_flip_lower_p,
    sign_flip_upper_p,
    t_quantile,
    within_margin_p,
)

pytestmark = pytest.mark.heavy


def _enumerated(diffs: list[Fraction]) -> float:
    """The definition, by brute force: #{ε : Σ ε|d| ≤ Σ d} / 2^G."""
    observed = sum(diffs)
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(diffs))
        if sum(s * abs(d) for s, d in zip(signs, diffs, strict=True)) <= observed
    )
    return hits / 2 ** len(diffs)


@pytest.mark.parametrize(
    "diffs",
    [
        [Fraction(-1)] * 6,
        [Fraction(-1, 3), Fraction(0), Fraction(2, 3), Fraction(-1), Fraction(-1, 2)],
        [Fraction(1, 3), Fraction(1, 3), Fraction(-1, 3), Fraction(0)],
        [Fraction(-2, 3), Fraction(-1, 3), Fraction(-1, 10), Fraction(1, 10), Fraction(0)] * 2,
    ],
)
def test_lower_p_is_the_share_of_sign_assignments_at_or_below_the_observed_sum(
    diffs: list[Fraction],
) -> None:
    assert sign_flip_lower_p(diffs) == pytest.approx(_enumerated(diffs))


def test_every_scenario_against_b_reaches_the_floor_and_zeros_change_nothing() -> None:
    assert sign_flip_lower_p([Fraction(-1)] * 6) == one_sided_floor(6) == 1 / 64
    assert sign_flip_lower_p([Fraction(-1)] * 6 + [Fraction(0)] * 3) == 1 / 64
    assert sign_flip_upper_p([Fraction(1, 2)] * 5) == 1 / 32
    assert sign_flip_lower_p([]) is None


def test_six_scenarios_are_needed_for_two_tests_at_five_percent() -> None:
    assert pairs_needed(2, 0.05) == 6
    assert pairs_needed(1, 0.05) == 5
    assert pairs_needed(4, 0.05) == 7


def test_holm_steps_down_and_stops_at_the_first_retained_hypothesis() -> None:
    # Holm 1979's worked logic: sorted p against alpha/m, alpha/(m-1), ...
    assert holm([0.01, 0.04, 0.03, 0.005], 0.05) == [True, False, False, True]
    assert holm([0.012, 0.013, 0.04], 0.05) == [True, True, True]
    assert holm([0.02, 0.02], 0.05) == [True, True]
    assert holm([0.03, 0.6], 0.05) == [False, False]


@pytest.mark.parametrize(
    ("df", "expected"), [(1, 12.7062), (2, 4.3027), (5, 2.5706), (11, 2.2010), (60, 2.0003)]
)
def test_t_quantile_matches_the_printed_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)


def _margin_size(g: int, reps: int, margin: float, lowest: float, trials: int, seed: int) -> float:
    """How often the margin test wrongly shows B within M when B is exactly M worse in every
    scenario, A's rates drawn uniformly from [max(lowest, M), 1]."""
    rng = random.Random(seed)
    wrong = 0
    for _ in range(trials):
        cells = []
        for _ in range(g):
            rate_a = rng.uniform(max(lowest, margin), 1.0)
            rate_b = rate_a - margin
            k_a = sum(rng.random() < rate_a for _ in range(reps))
            k_b = sum(rng.random() < rate_b for _ in range(reps))
            cells.append((k_b, reps, k_a, reps))
        p = within_margin_p(cells, margin)
        assert p is not None
        wrong += p <= 0.05
    return wrong / trials


@pytest.mark.parametrize(
    ("g", "reps", "margin", "lowest"),
    [
        (6, 10, 0.1, 0.0),
        (6, 10, 0.2, 0.0),
        (12, 10, 0.1, 0.0),
        (12, 10, 0.2, 0.0),
        (6, 2, 0.05, 0.8),
        (12, 2, 0.1, 0.0),
        (6, 3, 0.1, 0.8),
        (12, 3, 0.2, 0.0),
    ],
)
def test_the_margin_test_keeps_its_size_at_the_margin_boundary(
    g: int, reps: int, margin: float, lowest: float
) -> None:
    """At 2 or 3 reps near a rate of 1 the sign-flip test of d_s + M this replaced showed B
    within M in 0.14-0.24 of draws; the score test holds alpha + 0.01 at every rep count."""
    size = _margin_size(g, reps, margin, lowest, trials=3000, seed=20260 + g * reps)
    assert size <= 0.05 + 0.01, f"G={g}, reps={reps}, M={margin}: size {size:.3f}"


def test_the_restricted_rates_keep_the_margin_and_maximise_the_likelihood() -> None:
    def log_likelihood(rate_b: float, rate_a: float) -> float:
        return sum(
            k * math.log(r) + (n - k) * math.log(1 - r) if 0 < r < 1 else 0.0
            for k, n, r in ((7, 10, rate_b), (9, 10, rate_a))
        )

    rate_b, rate_a = restricted_rates(7, 10, 9, 10, -0.1)
    assert rate_b - rate_a == pytest.approx(-0.1)
    grid = [x / 10000 for x in range(1, 9000)]
    best = max(grid, key=lambda r: log_likelihood(r, r + 0.1))
    assert rate_b == pytest.approx(best, abs=1e-3)
    assert restricted_rates(2, 2, 2, 2, -0.05) == pytest.approx((0.95, 1.0))


def test_a_scenario_of_all_passes_on_both_sides_is_not_shown_within_a_small_margin() -> None:
    """Twelve reps a side, every one a pass: B 5 points worse would look the same often."""
    p = within_margin_p([(2, 2, 2, 2)] * 6, 0.05)
    assert p is not None and p > 0.05
    assert within_margin_p([(2, 2, 2, 2)], 0.05) is None

"""The gate's one-sided sign-flip test, Holm, and the t quantile they lean on."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from evalkit.stats import (
    holm,
    one_sided_floor,
    pairs_needed,
    sign_flip_lower_p,
    sign_flip_upper_p,
    t_quantile,
)


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
    shift = Fraction(margin).limit_denominator(1000)
    wrong = 0
    for _ in range(trials):
        diffs = []
        for _ in range(g):
            rate_a = rng.uniform(max(lowest, margin), 1.0)
            rate_b = rate_a - margin
            k_a = sum(rng.random() < rate_a for _ in range(reps))
            k_b = sum(rng.random() < rate_b for _ in range(reps))
            diffs.append(Fraction(k_b - k_a, reps) + shift)
        p = sign_flip_upper_p(diffs)
        assert p is not None
        wrong += p <= 0.05
    return wrong / trials


@pytest.mark.parametrize(("g", "margin"), [(6, 0.1), (6, 0.2), (12, 0.1), (12, 0.2)])
def test_the_margin_test_keeps_its_size_at_the_margin_boundary(g: int, margin: float) -> None:
    size = _margin_size(g, 10, margin, lowest=0.0, trials=600, seed=20260 + g)
    assert size <= 0.05 + 0.01, f"G={g}, M={margin}: size {size:.3f}"


def test_the_margin_test_does_not_keep_its_size_when_reps_cannot_resolve_the_margin() -> None:
    """The limit, pinned so that it is never forgotten: at 2 reps per scenario, a 0.05 margin
    and rates near 1, most differences are 0, shifted to +M, and read as B within M."""
    size = _margin_size(6, 2, 0.05, lowest=0.8, trials=600, seed=7)
    assert size > 0.05 + 0.01, f"size {size:.3f}"

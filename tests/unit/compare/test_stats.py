"""The comparison statistics, each checked against a value published for it."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from evalkit.stats import (
    fisher_exact,
    newcombe_difference,
    reps_per_side,
    scenarios_for,
    sign_flip_floor,
    sign_flip_p,
    target_rate,
)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((48, 80), (56, 70), (0.0524, 0.3339)),
        ((3, 10), (9, 10), (0.1705, 0.8090)),
        ((2, 7), (6, 7), (0.0582, 0.8062)),
        ((0, 29), (5, 56), (-0.0381, 0.1926)),
    ],
)
def test_newcombe_interval_matches_newcombe_1998_method_10(
    a: tuple[int, int], b: tuple[int, int], expected: tuple[float, float]
) -> None:
    """Newcombe RG (1998), 'Interval estimation for the difference between independent
    proportions: comparison of eleven methods', Stat Med 17:873-890, Table II, examples
    (a) 56/70-48/80, (b) 9/10-3/10, (c) 6/7-2/7, (d) 5/56-0/29, method 10 (score, no CC)."""
    interval = newcombe_difference(*a, *b)
    assert interval is not None
    assert interval[0] == pytest.approx(expected[0], abs=5e-5)
    assert interval[1] == pytest.approx(expected[1], abs=5e-5)


def test_newcombe_interval_is_undefined_for_an_empty_side() -> None:
    assert newcombe_difference(0, 0, 3, 4) is None


def test_fisher_two_sided_matches_the_tea_tasting_experiment() -> None:
    """Fisher RA (1935), The Design of Experiments, the lady tasting tea: 3 of 4 cups right
    each way gives two-sided p = 34/70 = 0.4857 (R: fisher.test(matrix(c(3,1,1,3),2)))."""
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(34 / 70)


def test_fisher_two_sided_for_six_of_six_against_none_of_six() -> None:
    """The two extreme tables of margins 6/6, each 1/C(12,6) = 1/924: p = 2/924."""
    assert fisher_exact(6, 6, 0, 6) == pytest.approx(2 / 924)
    assert fisher_exact(0, 6, 6, 6) == pytest.approx(2 / 924)


def test_fisher_is_one_for_identical_sides_and_undefined_for_an_empty_one() -> None:
    assert fisher_exact(6, 6, 6, 6) == 1.0
    assert fisher_exact(0, 0, 1, 1) is None


def test_sign_flip_equals_the_exact_mcnemar_test_on_binary_pairs() -> None:
    """Fagerland MW, Lydersen S, Laake P (2013), 'The McNemar test for binary matched-pairs
    data', BMC Med Res Methodol 13:91: airway hyper-responsiveness before and after stem
    cell transplantation, 21 pairs with 1 and 7 discordant; exact conditional p = 0.070.
    Per-pair differences of -1/+1/0 make the sign-flip test that same exact test."""
    pairs = [Fraction(1)] * 7 + [Fraction(-1)] + [Fraction(0)] * 13
    p = sign_flip_p(pairs)
    assert p == pytest.approx(18 / 256)
    assert round(p, 3) == 0.070


def test_sign_flip_counts_every_assignment_like_brute_force() -> None:
    diffs = [Fraction(1, 2), Fraction(-1, 3), Fraction(1), Fraction(0), Fraction(2, 3)]
    observed = abs(sum(diffs))
    flips = list(itertools.product((1, -1), repeat=len(diffs)))
    brute = sum(
        1 for s in flips if abs(sum(x * d for x, d in zip(s, diffs, strict=True))) >= observed
    )
    assert sign_flip_p(diffs) == pytest.approx(brute / len(flips))


def test_three_scenarios_all_one_way_reach_only_the_floor() -> None:
    assert sign_flip_p([Fraction(-1)] * 3) == 0.25
    assert sign_flip_floor(3) == 0.25
    assert sign_flip_floor(6) == pytest.approx(0.03125)
    assert scenarios_for(0.05) == 6


def test_no_difference_gives_p_one() -> None:
    assert sign_flip_p([Fraction(0)] * 3) == 1.0
    assert sign_flip_p([]) is None


def test_reps_per_side_matches_the_fleiss_table_value() -> None:
    """0.5 against 0.7, alpha 0.05 two-sided, 80 % power: 93 per group by the normal
    approximation without continuity correction (Fleiss, Levin, Paik 2003, Statistical
    Methods for Rates and Proportions, ch. 4); R's power.prop.test(p1=0.5, p2=0.7,
    power=0.8) reports n = 92.99."""
    assert reps_per_side(0.5) == 93


def test_the_target_rate_stays_inside_zero_to_one() -> None:
    assert target_rate(0.5) == pytest.approx(0.7)
    assert target_rate(1.0) == pytest.approx(0.8)
    assert reps_per_side(1.0) == reps_per_side(0.0)

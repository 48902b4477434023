"""The bisection's statistics, without any CLI: the endpoint test, the SPRT's boundaries,
truncation, skips, and a seeded simulation of many bisections held to its error rate."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from evalkit.compare.sprt import bisect_versions, bounds, jeffreys, split_alpha
from evalkit.stats import fisher_greater

K = 32
SETTINGS = [(1.0, 0.0), (0.9, 0.5), (0.8, 0.6)]


def test_the_one_sided_fisher_test_is_the_upper_tail() -> None:
    assert fisher_greater(5, 5, 0, 5) == pytest.approx(1 / math.comb(10, 5))
    assert fisher_greater(0, 5, 5, 5) == pytest.approx(1.0)


def test_the_boundaries_and_the_split_alpha() -> None:
    assert split_alpha(0.05, 32) == pytest.approx(0.01)
    lower, upper = bounds(0.01)
    assert upper == pytest.approx(math.log(0.99 / 0.01))
    assert lower == pytest.approx(math.log(0.01 / 0.99))
    assert jeffreys(10, 10) == pytest.approx(10.5 / 11)


def _versions(k: int) -> list[str]:
    return [f"2.1.{i}" for i in range(k)]


def simulate(
    p_good: float, p_bad: float, runs: int, seed: int, max_reps: int = 200
) -> Counter[str]:
    """`runs` bisections over K versions with a uniform culprit: each ends right, wrong,
    cannot tell, or with endpoints that do not differ."""
    rng = random.Random(seed)
    versions = _versions(K)
    tally: Counter[str] = Counter()
    for _ in range(runs):
        culprit = rng.randrange(1, K)

        def draw(version: str, n: int, culprit: int = culprit) -> list[bool]:
            rate = p_good if versions.index(version) < culprit else p_bad
            return [rng.random() < rate for _ in range(n)]

        result = bisect_versions(versions, draw, max_reps=max_reps, alpha=0.05)
        if result.outcome == "found":
            tally["right" if result.first_bad == versions[culprit] else "wrong"] += 1
        else:
            tally[result.outcome] += 1
    return tally


@pytest.mark.parametrize(("p_good", "p_bad"), SETTINGS)
def test_a_thousand_bisections_name_a_wrong_version_no_more_often_than_alpha(
    p_good: float, p_bad: float
) -> None:
    tally = simulate(p_good, p_bad, runs=1000, seed=2026)
    assert tally["wrong"] / 1000 <= 0.05, tally


def test_a_flat_range_is_refused_at_the_endpoints() -> None:
    result = bisect_versions(_versions(8), lambda v, n: [True] * n, n0=10)
    assert result.outcome == "endpoints-do-not-differ"


def test_a_midpoint_that_never_decides_is_cannot_tell_never_a_guess() -> None:
    versions = _versions(3)
    patterns = {
        versions[0]: itertools.cycle([True, True, True, False]),
        versions[1]: itertools.cycle([True, False]),
        versions[2]: itertools.cycle([False, False, False, True]),
    }

    def draw(version: str, n: int) -> list[bool]:
        return [next(patterns[version]) for _ in range(n)]

    result = bisect_versions(versions, draw, n0=20, max_reps=40)
    assert (result.outcome, result.first_bad) == ("cannot-tell", None)
    assert (result.steps[-1].decision, result.steps[-1].reps) == ("cannot-tell", 40)


def test_a_version_that_cannot_run_is_skipped_and_said() -> None:
    versions = _versions(5)
    result = bisect_versions(
        versions,
        lambda v, n: [versions.index(v) < 3] * n,
        runs=lambda v: v != versions[2],
    )
    assert result.outcome == "found" and result.first_bad == versions[3]
    assert [s.version for s in result.steps if s.decision == "skipped"] == [versions[2]]

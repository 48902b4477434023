"""The scenario-clustered interval of a pooled rate: R's survey package as the outside oracle, and
a seeded coverage simulation over clustered (beta-binomial) data."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from evalkit.stats import clustered_interval, wilson

EXPECTED = Path(__file__).with_name("expected_values")
CASES = {
    "c3_mixed": ([3, 2, 0], [3, 3, 3]),
    "c3_uneven": ([1, 4, 9], [2, 5, 10]),
    "c6_high": ([10, 9, 7, 10, 4, 8], [10] * 6),
    "c6_spread": ([0, 3, 3, 1, 2, 3], [3] * 6),
    "c6_binomial": ([2, 1, 2, 2, 1, 2], [3] * 6),
    "c12_uneven": ([5, 4, 2, 9, 1, 3, 3, 7, 0, 2, 6, 4], [5, 6, 3, 10, 4, 3, 5, 8, 2, 3, 9, 6]),
    "c12_icc": ([10, 10, 0, 0, 10, 10, 0, 10, 10, 0, 10, 10], [10] * 12),
}


def _expected() -> list[dict[str, str]]:
    with (EXPECTED / "clustered_interval.csv").open() as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("row", _expected(), ids=lambda r: r["case"])
def test_matches_r_survey(row: dict[str, str]) -> None:
    """Variance and df from svydesign(ids = ~scenario) / svymean / degf; the bounds are
    svyciprop(method = "beta")'s on the design effect clamped to [1, N/G], computed in
    clustered_interval.R (survey 4.1.1), and svyciprop's own wherever the clamp does not bind."""
    k, n = CASES[row["case"]]
    found = clustered_interval(list(zip(k, n, strict=True)))
    assert found is not None
    assert found.scenarios == int(row["G"])
    assert found.variance == pytest.approx(float(row["variance"]), rel=1e-9)
    assert found.deff == pytest.approx(float(row["deff"]), rel=1e-9)
    assert found.low == pytest.approx(float(row["low"]), abs=1e-9)
    assert found.high == pytest.approx(float(row["high"]), abs=1e-9)
    if 1.0 < found.deff < sum(n) / len(n):
        assert (found.low, found.high) == pytest.approx(
            (float(row["kg_low"]), float(row["kg_high"])), abs=1e-9
        )


def test_one_scenario_has_no_clustered_interval() -> None:
    assert clustered_interval([(2, 3)]) is None
    assert clustered_interval([(2, 3), (0, 0)]) is None


def test_all_pass_takes_the_reps_as_fully_correlated() -> None:
    found = clustered_interval([(3, 3)] * 4)
    assert found is not None
    assert (found.low, found.high) == pytest.approx(wilson(4, 4) or (0, 0))
    assert found.deff == 3


def test_reps_that_look_independent_keep_the_rep_level_width() -> None:
    found = clustered_interval([(2, 3), (1, 3), (2, 3), (2, 3), (1, 3), (2, 3)])
    assert found is not None
    assert found.deff == 1.0


def _beta_binomial(rng: random.Random, p: float, icc: float, reps: int) -> int:
    rate = p if icc == 0 else rng.betavariate(p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc)
    return sum(rng.random() < rate for _ in range(reps))


def coverage(g: int, reps: int, p: float, icc: float, trials: int, seed: int) -> float:
    rng = random.Random(seed)
    covered = 0
    for _ in range(trials):
        cells = [(_beta_binomial(rng, p, icc, reps), reps) for _ in range(g)]
        found = clustered_interval(cells)
        assert found is not None
        covered += found.low <= p <= found.high
    return covered / trials


GRID = [
    (g, m, p, icc)
    for g in (3, 6, 12)
    for m in (3, 10)
    for p in (0.5, 0.8, 0.95)
    for icc in (0.0, 0.3, 0.8)
]


def test_the_hardest_setting_covers_95_percent_at_the_full_draw_count() -> None:
    """Twelve scenarios of ten reps, rate 0.8, ICC 0.8: a draw where every scenario but one
    passes every rep shows almost no spread, so its design effect reads as 1. The Wilson form
    on that size covered 0.924 here (its lower bound above the truth 5.4 % of the time); the
    beta bounds cover at least the issue's 0.93. The seed is bench/clustered_coverage.py's."""
    g, m, p, icc = 12, 10, 0.8, 0.8
    rng = random.Random(g * 1_000_003 + m * 10_007 + int(p * 100) * 101 + int(icc * 10))
    covered = 0
    for _ in range(2000):
        found = clustered_interval([(_beta_binomial(rng, p, icc, m), m) for _ in range(g)])
        assert found is not None
        covered += found.low <= p <= found.high
    assert covered / 2000 >= 0.93, f"coverage {covered / 2000:.4f}"


@pytest.mark.parametrize(("g", "m", "p", "icc"), GRID)
def test_coverage_over_clustered_data(g: int, m: int, p: float, icc: float) -> None:
    """A reduced run (300 draws a setting) of the issue's grid; bench/clustered_coverage.py
    runs 2,000 a setting. Floors: 0.93 at G >= 6, 0.90 at G = 3, less the Monte Carlo
    error of 300 draws (two standard errors at 0.93, about 0.03)."""
    found = coverage(g, m, p, icc, trials=300, seed=hash((g, m, p, icc)) % 10**6)
    floor = (0.93 if g >= 6 else 0.90) - 0.03
    assert found >= floor, f"G={g} m={m} p={p} icc={icc}: coverage {found:.3f}"

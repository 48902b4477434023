"""Where a difference's noise comes from, and which next grid narrows it most."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare.compare import compare
from evalkit.compare.sides import load_side
from evalkit.inference.variance import allocate, difference
from evalkit.models import VerdictValue
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate


def test_the_components_of_a_paired_difference_by_hand() -> None:
    # B passes 4/4 and 2/4, A 2/4 and 2/4: d = 0.5, 0; within B (0 + 1) / 6, within A 2 / 6
    c = difference([(4, 4, 2, 4), (2, 4, 2, 4)])
    assert c is not None
    assert (c.within_b, c.within_a) == pytest.approx((1 / 6, 2 / 6))
    # spread of d: 0.125; the reps' own noise in it: (1/6 + 2/6) / 4 = 0.125; nothing left
    assert c.between == pytest.approx(0.0)
    assert difference([(1, 1, 0, 1), (0, 1, 1, 1)]) is None  # one rep a side: no within


def test_differences_that_vary_by_scenario_buy_scenarios() -> None:
    c = difference([(10, 10, 0, 10), (0, 10, 0, 10), (10, 10, 0, 10), (0, 10, 0, 10)] * 2)
    assert c is not None and c.between > 0 and c.within_a == 0
    best = allocate(c, 80)
    assert (best.scenarios, best.reps) == (16, 10)  # eight new scenarios, no more reps


def test_rep_noise_alone_is_indifferent_and_keeps_the_scenarios() -> None:
    c = difference([(5, 10, 5, 10)] * 8)
    assert c is not None and c.between == 0
    best = allocate(c, 80)
    # no between part: any split of 80 reps a side narrows alike; the first found is kept
    assert best.narrowing == pytest.approx(1 - 0.5**0.5)


def test_compare_states_the_difference_noise_of_each_paired_cell(
    suite: Suite, tmp_path: Path
) -> None:
    def half(_: str, __: str, rep: int) -> VerdictValue:
        return "PASS" if rep % 2 else "FAIL"

    a = fabricate(suite, tmp_path / "a", "policy:oracle", half, reps=4)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", reps=4)
    result = compare(suite, load_side("A", a), load_side("B", b), new_reps=24)
    paired = [e for e in result.comparisons if e.analysis == "per-scenario" and e.level == "all"]
    assert paired and all(e.noise is not None for e in paired)
    noise = paired[0].noise
    assert noise is not None and noise.new_reps == 24
    assert "next grid: of 24 more reps a side" in noise.next_grid
    assert "cannot go below 2^-3" in noise.next_grid

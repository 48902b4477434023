"""A comparison you may stop early: the e-process is what its closed form says, holds its
level over a look after every rep where the fixed test does not, and `gate --sequential`
maps it onto the gate's exit codes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.sequential_level import ALPHA, SETTINGS, simulate
from evalkit.compare.compare import compare
from evalkit.compare.gate import gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.errors import ConfigError
from evalkit.inference.sequential import anytime_p, one_sided_e, paired_signs, path
from evalkit.models import VerdictValue
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate

pytestmark = pytest.mark.heavy

DRAWS = 2000


def test_the_e_value_is_the_mixture_integral() -> None:
    for against, towards in ((0, 0), (3, 0), (5, 2), (1, 6)):
        n, steps = against + towards, 20000
        integral = sum(
            (0.5 + (i + 0.5) / steps / 2) ** against * (0.5 - (i + 0.5) / steps / 2) ** towards
            for i in range(steps)
        ) / (2 * steps)
        assert one_sided_e(against, towards) == pytest.approx(2 ** (n + 1) * integral, rel=1e-6)


def test_pairs_are_taken_rep_by_rep_so_more_reps_only_extend_the_path() -> None:
    a, b = [[1, 1, 0], [1, 0]], [[0, 1, 1], [0, 0]]
    assert paired_signs(a, b) == [1, 1, 0, 0, -1]
    longer = paired_signs([[1, 1, 0, 1], [1, 0, 1]], [[0, 1, 1, 0], [0, 0, 0]])
    assert longer[:5] == paired_signs(a, b)
    assert path([1, 0, 1, -1]) == [one_sided_e(1, 0), one_sided_e(2, 0), one_sided_e(2, 1)]
    assert anytime_p([1] * 8) == pytest.approx(1 / one_sided_e(8, 0))


@pytest.mark.parametrize(("scenarios", "reps"), SETTINGS)
def test_the_sequential_test_holds_its_level_over_a_look_after_every_rep(
    scenarios: int, reps: int
) -> None:
    sequential, fixed = simulate(scenarios, reps, DRAWS, seed=scenarios * 1009 + reps)
    se = math.sqrt(ALPHA * (1 - ALPHA) / DRAWS)
    assert sequential <= ALPHA + 2 * se, (scenarios, reps, sequential)
    assert fixed > ALPHA + 2 * se, (scenarios, reps, fixed)  # peeking spends alpha again


def test_gate_sequential_exits_1_on_a_regression_and_3_before_it_can_tell(
    suite: Suite, tmp_path: Path
) -> None:
    def worse(_: str, polarity: str, rep: int) -> VerdictValue:
        return "FAIL" if polarity == "negative" and rep % 2 else "PASS"

    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=4)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", worse, reps=4)
    settings = settings_for(suite, sequential=True)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings)
    assert verdict.exit_code == 1, verdict.line
    spec = next(t for t in verdict.tests if t.polarity == "negative")
    assert (spec.decision, spec.discordant) == ("regression", 12)
    assert "e-process" in verdict.settings.method
    few_a = fabricate(suite, tmp_path / "fa", "policy:oracle", reps=1)
    few_b = fabricate(suite, tmp_path / "fb", "policy:oracle", worse, reps=1)
    early = gate(suite, load_side("A", few_a), load_side("B", few_b), settings)
    assert early.exit_code == 3, early.line
    assert "discordant against B" in early.line
    with pytest.raises(ConfigError, match="--sequential"):
        settings_for(suite, sequential=True, margin=0.1)


def test_compare_sequential_gives_each_paired_cell_an_anytime_p(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=4)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", reps=4)
    result = compare(suite, load_side("A", a), load_side("B", b), sequential=True)
    paired = [e for e in result.comparisons if e.analysis == "per-scenario"]
    assert paired and all(e.sequential_p == 1.0 for e in paired)

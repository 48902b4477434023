"""A floor on "better": `gate --superiority --min-delta D` passes only where B - A > D is
shown, and `compare --min-delta D` says which paired cells show it."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.compare import compare
from evalkit.compare.gate import gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.errors import ConfigError
from evalkit.models import VerdictValue
from evalkit.stats import superiority_p
from evalkit.suite.config import Suite
from tests.gate_folders import Decide, fabricate

pytestmark = pytest.mark.heavy


def passing(share: int) -> Decide:
    """Every scenario passes its first `share` reps of ten."""

    def decide(_: str, __: str, rep: int) -> VerdictValue:
        return "PASS" if rep <= share else "FAIL"

    return decide


def test_a_large_real_difference_above_the_floor_exits_0(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", passing(2), reps=10)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", passing(10), reps=10)
    done = CliRunner().invoke(app, ["gate", str(a), str(b), "--superiority", "--min-delta", "0.3"])
    assert done.exit_code == 0, done.output
    verdict = gate(
        suite,
        load_side("A", a),
        load_side("B", b),
        settings_for(suite, min_delta=0.3, superiority=True),
    )
    assert {t.decision for t in verdict.tests} == {"better"}
    assert {t.test_used for t in verdict.tests} == {"sign-flip"}  # ten reps a side
    assert "better than A by more than 0.3" in verdict.line


def test_a_real_difference_below_the_floor_exits_1(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", passing(5), reps=10)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", passing(7), reps=10)
    settings = settings_for(suite, min_delta=0.3, superiority=True)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings)
    assert verdict.exit_code == 1, verdict.line
    assert {t.decision for t in verdict.tests} == {"not-better"}
    # the same difference is shown better than no floor at all
    plain = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite, superiority=True))
    assert plain.exit_code == 0, plain.line


def test_too_few_scenarios_for_the_floor_exit_3(suite: Suite, tmp_path: Path) -> None:
    only = {"P1", "P2", "N1", "N2"}
    a = fabricate(suite, tmp_path / "a", "policy:oracle", passing(0), reps=10, only=only)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", passing(10), reps=10, only=only)
    settings = settings_for(suite, min_delta=0.1, superiority=True)
    assert gate(suite, load_side("A", a), load_side("B", b), settings).exit_code == 3


def test_superiority_and_a_margin_together_are_refused(suite: Suite) -> None:
    with pytest.raises(ConfigError, match="drop --margin"):
        settings_for(suite, margin=0.1, superiority=True)


def test_a_floor_without_superiority_is_refused_rather_than_ignored(suite: Suite) -> None:
    with pytest.raises(ConfigError, match="add --superiority"):
        settings_for(suite, min_delta=0.3)


def test_the_suites_frozen_floor_decides_when_the_command_names_none(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", passing(5), reps=10)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", passing(7), reps=10)
    frozen = suite.config.gate.model_copy(update={"min_delta": 0.3})
    held = suite.config.model_copy(update={"gate": frozen})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(suite, "config", held)
        settings = settings_for(suite, superiority=True)
        verdict = gate(suite, load_side("A", a), load_side("B", b), settings)
    assert (settings.min_delta.value, settings.min_delta.source) == (0.3, "evalkit.yaml")
    assert verdict.exit_code == 1, verdict.line  # 0.2 better is not better by more than 0.3


def test_compare_says_better_by_more_than_d(suite: Suite, tmp_path: Path) -> None:
    # three scenarios a set and polarity: at nine reps the score test can show it, where the
    # sign-flip test's floor (1/8) could not
    a = fabricate(suite, tmp_path / "a", "policy:oracle", passing(1), reps=9)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", passing(9), reps=9)
    result = compare(suite, load_side("A", a), load_side("B", b), min_delta=0.3)
    paired = [e for e in result.comparisons if e.analysis == "per-scenario" and e.level == "all"]
    assert len(paired) == 4
    assert all(e.better.startswith("better by more than 0.3") for e in paired)
    tight = compare(suite, load_side("A", a), load_side("B", b), min_delta=0.9)
    assert all(e.better.startswith("not shown") for e in tight.comparisons if e.better)


@pytest.mark.parametrize("reps", [3, 10])
def test_the_floor_test_keeps_its_size_where_b_is_exactly_d_better(reps: int) -> None:
    """At B - A = D exactly (the null's edge), rejections stay near alpha, whichever test
    the reps call for."""
    rng = random.Random(4400 + reps)
    rejections, trials, g, floor = 0, 1500, 8, 0.2
    for _ in range(trials):
        cells = []
        for _ in range(g):
            base = rng.uniform(0.1, 0.7)
            k_a = sum(rng.random() < base for _ in range(reps))
            k_b = sum(rng.random() < base + floor for _ in range(reps))
            cells.append((k_b, reps, k_a, reps))
        p, _ = superiority_p(cells, floor)
        rejections += p is not None and p <= 0.05
    assert rejections / trials <= 0.05 + 2 * (0.05 * 0.95 / trials) ** 0.5


def test_the_sign_flip_form_subtracts_d_from_every_scenario() -> None:
    cells = [(10, 10, 2, 10)] * 5
    p, used = superiority_p(cells, 0.5)
    assert (used, p) == ("sign-flip", 1 / 32)
    assert Fraction(str(0.5)) == Fraction(1, 2)

"""What ERROR rows could change: the gate decided at both ends they allow, and the arms'
ERROR shares tested against each other; an ERROR row itself never changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.gate import gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.models import VerdictValue
from evalkit.stats import difference_bounds, error_bounds
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate

pytestmark = pytest.mark.heavy


def first_rep_errors_on_positives(_: str, polarity: str, rep: int) -> VerdictValue:
    return "ERROR" if polarity == "positive" and rep == 1 else "PASS"


def first_rep_errors_on_negatives(_: str, polarity: str, rep: int) -> VerdictValue:
    return "ERROR" if polarity == "negative" and rep == 1 else "PASS"


def test_a_rate_spans_every_error_as_a_non_pass_to_every_one_as_a_pass() -> None:
    assert error_bounds(7, 2, 10) == (0.7, 0.9)
    assert difference_bounds((5, 1, 10), (6, 2, 10)) == pytest.approx((-0.3, 0.0))
    assert error_bounds(0, 0, 0) is None


def test_six_of_sixty_errors_in_b_and_none_in_a_exit_2_naming_it(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=5)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", first_rep_errors_on_positives, reps=5)
    done = CliRunner().invoke(app, ["gate", str(a), str(b), "--format", "json"])
    assert done.exit_code == 2, done.output
    verdict = json.loads(done.stdout)
    assert "untrusted:error-rates-differ:both" in verdict["reasons"]
    assert "B 6/60" in verdict["line"]  # under today's 10 % limit, so only this test says it
    assert verdict["error_rates_p"] <= 0.05
    rows = (b / "results.tsv").read_text().count("\tERROR\t")
    assert rows == 6  # no row changed


def test_errors_alike_on_both_sides_that_could_decide_the_test_exit_2(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", first_rep_errors_on_negatives, reps=10)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", first_rep_errors_on_negatives, reps=10)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    assert verdict.exit_code == 2
    assert [c.token for c in verdict.causes] == ["errors-decide"]
    negative = next(t for t in verdict.tests if t.polarity == "negative")
    assert negative.at_error_bounds == ["regression", "no-regression"]
    assert negative.decision == "no-regression"  # today's count, unchanged
    assert verdict.error_rates_p == 1.0


def test_errors_that_cannot_move_the_decision_leave_the_gate_as_it_was(
    suite: Suite, tmp_path: Path
) -> None:
    def one_error(scenario: str, _: str, rep: int) -> VerdictValue:
        return "ERROR" if scenario.startswith("P1-") and rep == 1 else "PASS"

    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=5)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", one_error, reps=5)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    assert verdict.exit_code == 0, verdict.line
    recall = next(t for t in verdict.tests if t.polarity == "positive")
    assert recall.at_error_bounds == ["no-regression", "no-regression"]
    bounds = next(p for p in recall.pairs if p.scenario.startswith("P1-")).bounds
    assert bounds == pytest.approx([-0.2, 0.0])


def test_compare_shows_how_far_error_rows_could_move_each_difference(
    suite: Suite, tmp_path: Path
) -> None:
    from evalkit.compare.compare import compare
    from evalkit.compare.render import after_lines, to_markdown

    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=5)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", first_rep_errors_on_positives, reps=5)
    result = compare(suite, load_side("A", a), load_side("B", b))
    recall = next(
        e
        for e in result.comparisons
        if (e.set, e.level, e.measure, e.analysis) == ("run", "all", "recall", "per-scenario")
    )
    assert recall.difference == pytest.approx(-0.2)
    assert recall.error_bounds == pytest.approx([-0.2, 0.0])
    assert "run/all/recall per-scenario: ERROR rows could move B-A to [-0.200, +0.000]" in (
        after_lines(result)
    )
    assert "ERROR rows could move" in to_markdown(result)
    assert any("Fisher exact p = 0.0274" in n for n in result.notes)

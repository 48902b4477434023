"""`evalkit gate` on fabricated results folders: which exit code, and which cells decide it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.gate import Verdict, gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.models import VerdictValue
from evalkit.suite.config import Suite
from tests.conftest import REPO
from tests.gate_folders import fabricate, writes_always

pytestmark = pytest.mark.heavy


def run_gate(suite: Suite, a: Path, b: Path, **options: Any) -> Verdict:
    settings = settings_for(suite, **options)
    return gate(suite, load_side("A", a), load_side("B", b), settings)


def test_a_regression_on_every_negative_exits_1_naming_them(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:always-write", writes_always)
    verdict = run_gate(suite, a, b)
    assert (verdict.exit_code, verdict.status) == (1, "regression")
    spec = next(t for t in verdict.tests if t.polarity == "negative")
    assert (spec.scenarios, spec.decision, spec.p_value) == (6, "regression", 1 / 64)
    assert spec.against_b == [p.scenario for p in spec.pairs]
    assert all(s in verdict.line for s in spec.against_b)


def test_the_same_rates_exit_0_stating_the_smallest_effect_shown(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    verdict = run_gate(suite, a, a)
    assert verdict.exit_code == 0
    assert "shown only if >= 6 of 6 scenarios move against B" in verdict.line


def test_two_scenarios_cannot_show_a_regression_and_exit_3(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", only={"P1", "N1"})
    b = fabricate(suite, tmp_path / "b", "policy:always-write", writes_always, only={"P1", "N1"})
    verdict = run_gate(suite, a, b)
    assert (verdict.exit_code, verdict.status) == (3, "underpowered")
    assert "floor 1/2^1 = 0.5 > alpha/m = 0.025, 6 scenarios needed" in verdict.line


def test_untrusted_wins_over_underpowered_and_regression(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", only={"P1", "N1"})
    b = fabricate(
        suite, tmp_path / "b", "policy:x", writes_always, only={"P1", "N1"}, verified=False
    )
    verdict = run_gate(suite, a, b)
    assert verdict.exit_code == 2
    assert [c.token for c in verdict.causes] == ["not-publishable"]


def test_an_error_share_above_max_errors_exits_2_whatever_the_rates(
    suite: Suite, tmp_path: Path
) -> None:
    def one_error(scenario: str, _: str, __: int) -> VerdictValue:
        return "ERROR" if scenario.startswith("P1-") else "PASS"

    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", one_error)
    assert run_gate(suite, a, b).exit_code == 0  # 1 of 12 rows is under the default 10 %
    verdict = run_gate(suite, a, b, max_errors=0.05)
    assert verdict.exit_code == 2
    assert verdict.reasons == ["untrusted:errors:B"]
    assert verdict.settings.max_errors.source == "--max-errors"


def test_a_margin_asks_for_b_shown_within_it(suite: Suite, tmp_path: Path) -> None:
    def one_fail(scenario: str, _: str, rep: int) -> VerdictValue:
        return "FAIL" if scenario.startswith("N1-") and rep == 1 else "PASS"

    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=10)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", one_fail, reps=10)
    within = run_gate(suite, a, b, margin=0.2)
    assert within.exit_code == 0, within.line
    assert "B shown within 0.2 of A" in within.line
    tight = run_gate(suite, a, b, margin=0.01)
    assert tight.exit_code == 1
    # sixty passes a side cannot tell B from one point worse, so neither test shows it
    assert {t.decision for t in tight.tests} == {"not-within-margin"}
    assert "score test" in tight.settings.method


def test_the_suite_gate_block_is_used_and_an_override_is_labelled() -> None:
    suite = Suite(REPO)  # its own: the shared one caches its lock state, which edits would drift
    settings = settings_for(suite, alpha=0.1)
    assert settings.alpha.source == "--alpha"
    assert settings.margin.source == "default"
    original = suite.config.gate
    try:
        suite.config.gate = original.model_copy(update={"alpha": 0.01, "margin": 0.1})
        settings = settings_for(suite, alpha=0.1)
        assert (settings.alpha.value, settings.alpha.source) == (
            0.1,
            "--alpha (overrides evalkit.yaml)",
        )
        assert (settings.margin.value, settings.margin.source) == (0.1, "evalkit.yaml")
    finally:
        suite.config.gate = original


def test_the_cli_exits_with_the_verdicts_code(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:always-write", writes_always)
    done = CliRunner().invoke(app, ["gate", str(a), str(b), "--format", "json"])
    assert done.exit_code == 1, done.output
    assert json.loads(done.stdout)["reasons"] == ["regression"]


@pytest.mark.parametrize("fail_on_bars", [False, True])
def test_a_missed_bar_exits_1_only_under_fail_on_bars(
    suite: Suite, tmp_path: Path, fail_on_bars: bool
) -> None:
    from evalkit.models import ExpectedBar

    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=3)
    b = fabricate(
        suite,
        tmp_path / "b",
        "policy:oracle",
        lambda s, pol, _: "FAIL" if pol == "positive" and "-L1-" in s else "PASS",
        reps=3,
    )
    own = Suite(REPO)  # its own: the shared one caches its lock state, which edits would drift
    own.config.expected = {"L1": ExpectedBar(positive=1.0)}
    verdict = run_gate(own, a, b, fail_on_bars=fail_on_bars)
    missed = [bar.cell for bar in verdict.bars if bar.verdict == "miss"]
    assert missed
    if fail_on_bars:
        assert verdict.exit_code == 1
        assert f"bar-missed:{missed[0]}" in verdict.reasons
    else:
        assert verdict.exit_code == 0, verdict.line
        assert not any(r.startswith("bar-missed") for r in verdict.reasons)

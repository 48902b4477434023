"""An A/A run read back: the verdict-flip rate and the gate's false-positive rate over seeded
re-splits, against a simulation of the same design; and `gate --aa-from` refusing a
difference chance makes."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.aa import aa_report
from evalkit.compare.gate import gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.inference.aa import lower_p
from evalkit.models import ResultRow
from evalkit.records.folder.results import append_row
from evalkit.reference.coin import Coin
from evalkit.stats import holm, sign_flip_lower_p
from evalkit.suite.config import Suite
from evalkit.suite.subject import AA_VARIANT, SUITE_VARIANT
from tests.gate_folders import fabricate
from tests.minisuite import write_suite

pytestmark = pytest.mark.heavy

SCENARIOS, REPS = 10, 10
RATES = [0.15 + 0.7 * i / (SCENARIOS - 1) for i in range(SCENARIOS)]
"""Each scenario's true pass rate, alike in both arms: only chance tells them apart."""


def _suite(root: Path) -> Suite:
    """The mini suite with ten positives and ten negatives at L1."""
    write_suite(root)
    for polarity in ("P", "N"):
        text = (root / "scenarios" / f"{polarity}1-L1-demo.md").read_text(encoding="utf-8")
        for i in range(2, SCENARIOS + 1):
            (root / "scenarios" / f"{polarity}{i}-L1-demo.md").write_text(
                text.replace(f"id: {polarity}1-L1-demo", f"id: {polarity}{i}-L1-demo"),
                encoding="utf-8",
            )
    return Suite(root)


def _aa_folder(work: Path, seed: int) -> Path:
    """Two interleaved arms of identical wording: rep 2k-1 is A's k-th, rep 2k B's."""
    rng = random.Random(seed)
    work.mkdir(parents=True)
    for polarity in ("P", "N"):
        for i, rate in enumerate(RATES, start=1):
            for rep in range(1, 2 * REPS + 1):
                append_row(
                    work / "results.tsv",
                    ResultRow(
                        scenario=f"{polarity}{i}-L1-demo",
                        model="policy:coin",
                        a="A:PASS",
                        b="B:PASS",
                        verdict="PASS" if rng.random() < rate else "FAIL",
                        reasons="-",
                        rep=rep,
                        run_id="r1",
                        cli_version="2.1.328",
                        variant=SUITE_VARIANT if rep % 2 else AA_VARIANT,
                    ),
                )
    return work


def _simulated(draws: int, seed: int) -> tuple[float, float]:
    """Fresh A/A designs drawn whole: the gate's rejection rate and the flip rate."""
    rng = random.Random(seed)
    rejections, flipped = 0, 0
    for _ in range(draws):
        p_values = []
        for _ in ("positive", "negative"):
            diffs = []
            for rate in RATES:
                a = [rng.random() < rate for _ in range(REPS)]
                b = [rng.random() < rate for _ in range(REPS)]
                flipped += sum(x != y for x, y in zip(a, b, strict=True))
                diffs.append(sum(b) - sum(a))
            p = lower_p(diffs)
            p_values.append(1.0 if p is None else p)
        rejections += any(holm(p_values, 0.05))
    return rejections / draws, flipped / (draws * 2 * SCENARIOS * REPS)


def test_the_cached_sign_flip_is_the_gates() -> None:
    from fractions import Fraction

    diffs = [3, -1, 0, 2, 5, -4, 1]
    assert lower_p(diffs) == sign_flip_lower_p([Fraction(d, 10) for d in diffs])


def test_flip_and_false_positive_rates_match_a_simulation_of_the_design(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    built = aa_report(suite, _aa_folder(tmp_path / "aa", seed=7), draws=1000, seed=1)
    expected_flips = sum(2 * p * (1 - p) for p in RATES) / SCENARIOS
    [cell] = [c for c in built.cells if "/positive/" in c.where]
    assert cell.pairs == SCENARIOS * REPS
    spread = math.sqrt(expected_flips * (1 - expected_flips) / cell.pairs)
    assert abs(cell.rate - expected_flips) <= 3 * spread  # type: ignore[operator]
    fpr, flips = _simulated(2000, seed=3)
    assert abs(flips - expected_flips) <= 0.01
    # the re-split rate of one folder against fresh designs: both Monte Carlo errors, and
    # the folder's own draw (its per-scenario totals), allowed for at three SE each
    both = math.sqrt(fpr * (1 - fpr) / 2000 + built.standard_error**2)
    assert abs(built.false_positive_rate - fpr) <= 3 * both + 0.01, (built.line, fpr)
    assert built.false_positive_rate <= 0.05 + 2 * built.standard_error
    assert [t.measure for t in built.tests] == ["specificity", "recall"]
    assert all(0 < t.p95 < 0.3 for t in built.tests)


def test_the_cli_prints_the_false_positive_rate(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    _suite(root)
    folder = _aa_folder(tmp_path / "aa", seed=7)
    done = CliRunner().invoke(app, ["--suite", str(root), "aa", str(folder), "--draws", "200"])
    assert done.exit_code == 0, done.output
    assert "the gate rejected" in done.stdout and "false-positive rate" in done.stdout


def test_a_folder_of_one_arm_is_refused_in_one_line(suite: Suite, tmp_path: Path) -> None:
    from evalkit.errors import RefusedError

    folder = fabricate(suite, tmp_path / "one", "policy:oracle")
    with pytest.raises(RefusedError, match="not an A/A folder"):
        aa_report(suite, folder)


def test_the_coin_draws_each_rep_once_and_at_its_rate() -> None:
    coin = Coin.parse("coin:p=0.3")
    assert coin is not None and coin == Coin(0.3, 0)
    draws = [coin.acts("P1-L1-x", rep) for rep in range(1, 4001)]
    assert draws == [coin.acts("P1-L1-x", rep) for rep in range(1, 4001)]
    assert abs(sum(draws) / 4000 - 0.3) < 0.03
    assert Coin.parse("coin:p=0.3:seed=2") == Coin(0.3, 2)
    from evalkit.errors import ConfigError

    with pytest.raises(ConfigError, match="policy:coin:p=P"):
        Coin.parse("coin:p=1.5")


def test_gate_refuses_a_regression_smaller_than_the_aa_runs_chance(
    suite: Suite, tmp_path: Path
) -> None:
    def noisy(which: int) -> object:
        def decide(scenario: str, _: str, rep: int) -> str:
            return "PASS" if Coin(0.5, which).acts(scenario, rep) else "FAIL"

        return decide

    def worse(scenario: str, polarity: str, rep: int) -> str:
        return "FAIL" if rep == 1 and polarity == "negative" else "PASS"

    a = fabricate(suite, tmp_path / "a", "policy:oracle", reps=10)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", worse, reps=10)  # type: ignore[arg-type]
    shown = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    assert shown.exit_code == 1  # a 0.1 drop on every negative
    aa = tmp_path / "aa"
    for which, variant in ((1, SUITE_VARIANT), (2, AA_VARIANT)):
        fabricate(
            suite,
            aa,
            "policy:oracle",
            noisy(which),
            reps=10,
            declared={"variant": variant},  # type: ignore[arg-type]
        )
    settings = settings_for(suite)
    settings.aa_from = str(aa)
    refused = gate(suite, load_side("A", a), load_side("B", b), settings)
    assert refused.exit_code == 2, refused.line
    assert "untrusted:below-aa-noise:both" in refused.reasons


def test_an_aa_grid_of_a_real_model_needs_a_budget_cap(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["grid", str(tmp_path / "w"), "--aa", "--models", "sonnet", "--reps", "1"]
    )
    assert done.exit_code == 2
    assert "--max-cost-usd" in done.output

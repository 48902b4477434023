"""What `tune` refuses before any rep, what `--dry-run` leaves, and the budget's arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError, RefusedError
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from evalkit.tune.loop import Budget, tune
from evalkit.tune.plan import TuneRequest, plan_tune
from tests.tuning_suite import write_tuning_suite

PHRASE = "policy:phrase:outlives+the+task"


@pytest.fixture
def tuning(tmp_path: Path) -> Suite:
    root = write_tuning_suite(tmp_path / "suite")
    freeze(Suite(root))
    return Suite(root)


def test_a_shipped_suite_is_refused_for_size_naming_the_number(suite: Suite, tmp_path: Path
                                                               ) -> None:  # fmt: skip
    request = TuneRequest(suite, tmp_path / "work", ["policy:oracle"], proposer_cmd="true")
    with pytest.raises(RefusedError, match=r"the tests need \d+ scenarios a polarity"):
        tune(request)
    assert not (tmp_path / "work").exists()


def test_a_real_model_without_a_cap_is_refused(tuning: Suite, tmp_path: Path) -> None:
    request = TuneRequest(tuning, tmp_path / "work", ["sonnet"], proposer_cmd="true")
    with pytest.raises(ConfigError, match="--budget-usd X or --budget-reps N"):
        plan_tune(request)


def test_too_few_reps_for_the_margin_is_refused_for_size(tuning: Suite, tmp_path: Path) -> None:
    request = TuneRequest(tuning, tmp_path / "work", [PHRASE], reps=2, margin=0.1,
                          proposer_cmd="true")  # fmt: skip
    with pytest.raises(RefusedError, match="holds 6 positive"):
        plan_tune(request)


def test_a_dry_run_prints_the_worst_case_and_writes_nothing(tuning: Suite, tmp_path: Path
                                                            ) -> None:  # fmt: skip
    before = sorted(p.as_posix() for p in tuning.root.rglob("*"))
    lock = (tuning.root / "evalkit.lock").read_text()
    request = TuneRequest(tuning, tmp_path / "work", [PHRASE], reps=2, margin=0.3, rounds=3,
                          proposer_cmd="true", dry_run=True)  # fmt: skip
    done = tune(request)
    assert done.code == 0 and not done.tune_id
    assert done.plan.worst_reps == 24 + 3 * 48 + 48
    assert any("worst case 216 rep(s)" in line for line in done.plan.lines())
    assert not (tmp_path / "work").exists()
    assert sorted(p.as_posix() for p in tuning.root.rglob("*")) == before
    assert (tuning.root / "evalkit.lock").read_text() == lock


def test_the_budget_refuses_a_grid_that_would_pass_either_cap() -> None:
    budget = Budget(reps_cap=30, usd_cap=1.0, reps=24, usd=0.48)
    assert budget.refuses(6) is None
    assert "--budget-reps 30" in (budget.refuses(7) or "")
    assert "--budget-usd 1" in (Budget(None, 1.0, reps=24, usd=0.96).refuses(2) or "")


def test_a_reserve_an_earlier_tune_spent_is_refused_unless_asked_again(
    tuning: Suite, tmp_path: Path
) -> None:
    from evalkit.suite.lock import contaminate

    contaminate(tuning, "reserve", "evalkit tune tune-1: the reserve confirmed tune-1 once")
    request = TuneRequest(Suite(tuning.root), tmp_path / "work", [PHRASE], reps=2, margin=0.3,
                          proposer_cmd="true")  # fmt: skip
    with pytest.raises(RefusedError, match="tune tune-1: the reserve confirmed"):
        plan_tune(request)
    request.reserve_again = True
    assert plan_tune(request).needed == 6

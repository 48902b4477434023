"""`run_grid(GridRequest)` and `run_reps(RunRequest)` are what the `grid` and `run` commands
call: the refusals, the plan and what a person hears come from the library, through a view."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalkit.errors import ConfigError, EvalkitError
from evalkit.records.folder.workdir import Workdir
from evalkit.reference.scripted import POLICIES
from evalkit.run.commands import GridRequest, Limits, OnDone, RunRequest, run_grid, run_reps
from evalkit.suite.config import Suite


class Heard:
    """A view that keeps what it was told."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.warned: list[str] = []
        self.totals: list[int] = []

    def say(self, line: str) -> None:
        self.said.append(line)

    def warn(self, line: str) -> None:
        self.warned.append(line)

    @contextmanager
    def running(self, total: int) -> Iterator[OnDone]:
        self.totals.append(total)
        yield lambda done: None


def limits() -> Limits:
    return Limits(allow_unfrozen=True, scripted=POLICIES)


def test_a_grid_under_a_budget_of_nothing_plans_every_rep_and_runs_none(
    mini_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    request = GridRequest(
        suite=Suite(mini_root), models=["policy:oracle"], workdir=work, scenarios=["P1"],
        reps=2, max_cost_usd=0, limits=limits(),
    )  # fmt: skip
    heard = Heard()
    ran = run_grid(request, heard)
    assert ran.done == [] and ran.planned == 2 and ran.not_run == 2 and not ran.stopped
    assert heard.totals == [2]
    plans = Workdir(work).read_plans().items
    assert [sum(c.reps for c in p.skipped) for p in plans if p.skipped] == [2]


def test_a_grid_without_models_is_refused_before_anything_is_written(
    mini_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    request = GridRequest(suite=Suite(mini_root), models=[], workdir=work, limits=limits())
    with pytest.raises(ConfigError, match="--models"):
        run_grid(request)
    assert not work.exists()


def test_a_resumed_grid_says_what_is_left_before_it_runs(mini_root: Path, tmp_path: Path) -> None:
    work = tmp_path / "w"
    first = GridRequest(
        suite=Suite(mini_root), models=["policy:oracle"], workdir=work, scenarios=["P1"],
        max_cost_usd=0, limits=limits(),
    )  # fmt: skip
    run_grid(first)
    heard = Heard()
    again = GridRequest(
        suite=Suite(mini_root), models=["policy:oracle"], workdir=work, scenarios=["N1"],
        resume=True, max_cost_usd=0, limits=limits(),
    )  # fmt: skip
    ran = run_grid(again, heard)
    assert ran.planned == 1 and heard.totals == [1]
    assert heard.said == ["resuming: 1 rep(s) left to run, 0 of them planned before"]


def test_a_run_of_a_policy_without_scripted_models_is_refused_before_its_plan(
    mini_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    request = RunRequest(
        suite=Suite(mini_root), scenario="P1", model="policy:oracle", workdir=work,
        limits=Limits(allow_unfrozen=True),
    )  # fmt: skip
    heard = Heard()
    with pytest.raises(EvalkitError, match="scripted models"):
        run_reps(request, heard)
    assert heard.totals == [1] and not (work / "plans.jsonl").exists()

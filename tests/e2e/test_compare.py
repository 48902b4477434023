"""`evalkit compare` on real grids: two models, the same model twice, a confounded pair."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

GRID = ("--set", "run", "--reps", "1", "--jobs", "2")


@pytest.fixture(scope="module")
def grids(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, dict[str, Path]]:
    kit = new_kit(tmp_path_factory.mktemp("compare"))
    works = {}
    for name, model in (
        ("oracle", "policy:oracle"),
        ("oracle-again", "policy:oracle"),
        ("always-write", "policy:always-write"),
    ):
        works[name] = kit.base / name
        done = kit.run("grid", str(works[name]), "--models", model, *GRID, timeout=300)
        assert done.returncode == 0, done.why()
    return kit, works


def _pooled(data: dict[str, Any], measure: str, analysis: str) -> dict[str, Any]:
    return next(
        e
        for e in data["comparisons"]
        if e["level"] == "all" and e["measure"] == measure and e["analysis"] == analysis
    )


def test_two_models_differ_in_specificity_only(grids: tuple[Kit, dict[str, Path]]) -> None:
    kit, works = grids
    done = kit.run("compare", str(works["oracle"]), str(works["always-write"]), "--format", "json")
    assert done.returncode == 0, done.why()
    data = json.loads(done.stdout)
    assert data["differing"] == ["model"]
    spec = _pooled(data, "specificity", "per-rep")
    assert (spec["a"]["k"], spec["a"]["n"], spec["b"]["k"], spec["b"]["n"]) == (3, 3, 0, 3)
    assert spec["difference"] == -1.0
    assert spec["p_value"] == pytest.approx(2 / 20)
    paired = _pooled(data, "specificity", "per-scenario")
    assert (paired["scenarios"], paired["p_value"]) == (3, 0.25)
    assert "3 scenarios cannot reach 0.05" in paired["note"] and "6 could" in paired["note"]
    assert _pooled(data, "recall", "per-rep")["difference"] == 0.0


def test_the_table_says_what_three_scenarios_cannot_show(
    grids: tuple[Kit, dict[str, Path]],
) -> None:
    kit, works = grids
    done = kit.run("compare", str(works["oracle"]), str(works["always-write"]))
    assert done.returncode == 0, done.why()
    assert "A and B differ in model only" in done.stdout
    assert "3 scenarios cannot reach 0.05" in done.stdout  # the cell's note may wrap after it
    assert "this design cannot" in done.stdout


def test_the_same_policy_twice_shows_no_difference(grids: tuple[Kit, dict[str, Path]]) -> None:
    kit, works = grids
    done = kit.run("compare", str(works["oracle"]), str(works["oracle-again"]), "--format", "json")
    assert done.returncode == 0, done.why()
    data = json.loads(done.stdout)
    assert data["differing"] == []
    assert {e["difference"] for e in data["comparisons"]} == {0.0}

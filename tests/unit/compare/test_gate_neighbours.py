"""Neighbours are a factor: a side whose reps ran among neighbours is never gated or
compared against one whose reps ran alone, and two sets of neighbours are a factor like any
other."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare.compare import compare
from evalkit.compare.gate import Cause, gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.errors import RefusedError
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate, writes_always

AMONG = {"neighbours": {"jot": "sha256:" + "1" * 64}}
OTHERS = {"neighbours": {"jot": "sha256:" + "0" * 64}}


def _confounded(causes: list[Cause]) -> list[str]:
    return [c.detail for c in causes if c.token == "confounded"]


def test_a_side_among_neighbours_against_one_alone_exits_2(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", declared=AMONG)
    b = fabricate(suite, tmp_path / "b", "policy:oracle")
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    named = any("B with none" in d for d in _confounded(verdict.causes))
    assert verdict.exit_code == 2 and named, verdict.line


def test_compare_refuses_neighbours_against_none_even_when_confounding_is_allowed(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", declared=AMONG)
    b = fabricate(suite, tmp_path / "b", "policy:oracle")
    with pytest.raises(RefusedError, match="different neighbours"):
        compare(suite, load_side("A", a), load_side("B", b), allow_confounded=True)


def test_other_neighbours_are_the_one_factor_gated(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", declared=AMONG)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", writes_always, declared=OTHERS)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    assert (verdict.exit_code, verdict.causes) == (1, []), verdict.line

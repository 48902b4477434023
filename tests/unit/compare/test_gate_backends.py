"""The confinement backend is a factor: sides confined by different OS sandboxes are gated
and compared only with --allow-backends, which names it, and a side pooling two is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare.compare import compare
from evalkit.compare.gate import Cause, gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.errors import RefusedError
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate, writes_always

SRT = {"confinement": "srt"}


def _confounded(causes: list[Cause]) -> list[str]:
    return [c.detail for c in causes if c.token == "confounded"]


def test_sides_of_two_backends_exit_2_naming_both(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", declared={"confinement": "bwrap"})
    b = fabricate(suite, tmp_path / "b", "policy:oracle", declared=SRT)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    named = any("A in bwrap and B in srt" in d for d in _confounded(verdict.causes))
    assert verdict.exit_code == 2 and named, verdict.line


def test_allow_backends_gates_them_and_says_so(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", writes_always, declared=SRT)
    settings = settings_for(suite)
    settings.allow_backends = True
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings)
    assert (verdict.exit_code, verdict.causes) == (1, []), verdict.line


def test_a_side_pooling_two_backends_is_refused_naming_them(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    both = fabricate(suite, tmp_path / "both", "policy:oracle", verified=False)
    fabricate(suite, both, "policy:oracle", declared=SRT)
    verdict = gate(suite, load_side("A", a), load_side("B", both), settings_for(suite))
    named = any("B holds 2 confinement backends" in d for d in _confounded(verdict.causes))
    assert verdict.exit_code == 2 and named, verdict.line


def test_compare_refuses_two_backends_unless_allowed_and_then_names_them(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", declared=SRT)
    with pytest.raises(RefusedError, match="--allow-backends"):
        compare(suite, load_side("A", a), load_side("B", b))
    built = compare(suite, load_side("A", a), load_side("B", b), allow_backends=True)
    named = any("allowed by --allow-backends" in note for note in built.notes)
    assert named

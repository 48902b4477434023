"""The gate takes the agent as a factor: sides run by different agents are gated only when
chosen with `agent:`, and a side pooling two agents is refused, naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare.compare import compare
from evalkit.compare.gate import gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.errors import RefusedError
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate, writes_always

CODEX = {"agent": "codex"}


def _confounded(verdict_causes: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    return [(side, detail) for token, side, detail in verdict_causes if token == "confounded"]


def test_folders_of_two_agents_not_chosen_by_agent_exit_2_naming_agent(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", declared=CODEX)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    assert verdict.exit_code == 2 and "untrusted:confounded:both" in verdict.reasons
    [(side, detail)] = _confounded([(c.token, c.side, c.detail) for c in verdict.causes])
    assert side == "both"
    assert "different agents (A by claude and B by codex)" in detail and "agent:NAME" in detail


def test_agents_chosen_with_agent_selectors_are_the_factor_under_study(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", writes_always, declared=CODEX)
    same = fabricate(suite, tmp_path / "c", "policy:oracle", declared=CODEX)
    claude = load_side("A", a, "agent:claude")
    worse = gate(suite, claude, load_side("B", b, "agent:codex"), settings_for(suite))
    assert (worse.exit_code, worse.causes) == (1, []), worse.line
    alike = gate(suite, claude, load_side("B", same, "agent:codex"), settings_for(suite))
    assert alike.exit_code == 0, alike.line


def test_a_side_pooling_two_agents_is_refused_naming_them(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    both = fabricate(suite, tmp_path / "both", "policy:oracle", verified=False)
    fabricate(suite, both, "policy:oracle", declared=CODEX)
    verdict = gate(suite, load_side("A", a), load_side("B", both), settings_for(suite))
    assert verdict.exit_code == 2
    details = [d for s, d in _confounded([(c.token, c.side, c.detail) for c in verdict.causes])]
    assert "B holds 2 agents (claude 12 row(s), codex 12 row(s))" in " ".join(details)
    chosen = gate(
        suite, load_side("A", a), load_side("B", both, "agent:claude"), settings_for(suite)
    )
    assert chosen.exit_code == 0, chosen.line


def test_compare_refuses_a_side_pooling_two_agents_naming_them(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    both = fabricate(suite, tmp_path / "both", "policy:oracle", verified=False)
    fabricate(suite, both, "policy:oracle", declared=CODEX)
    with pytest.raises(RefusedError) as refused:
        compare(suite, load_side("A", a), load_side("B", both))
    assert "B holds 2 agents (claude 12 row(s), codex 12 row(s))" in str(refused.value)
    assert compare(suite, load_side("A", a), load_side("B", both, "agent:claude")).differing == []

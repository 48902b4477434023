"""required_hooks and the agents: a hook names the agents it is required of, and a rep of an
agent that cannot run a required hook's event is an ERROR that names both, never a pass nor
the agent's FAIL. Runs are fabricated in each agent's own stream (self-test's player)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.checkers.behaviour import SelfTestCase
from evalkit.errors import ConfigError
from evalkit.reference.cases import self_test_cases
from evalkit.reference.selftest import run_case
from evalkit.suite.config import Suite
from tests.e2e.conftest import copy_suite

pytestmark = pytest.mark.heavy

HOOKS = """required_hooks:
  - event: SessionStart
    output_contains: "os-vault"
"""


def _suite(tmp_path: Path, hooks: str) -> Suite:
    root = copy_suite(tmp_path / "suite", only={"P1"})
    config = root / "evalkit.yaml"
    text = config.read_text(encoding="utf-8")
    assert HOOKS in text
    config.write_text(text.replace(HOOKS, hooks), encoding="utf-8")
    return Suite(root)


def _played(suite: Suite, agent: str, tmp_path: Path, case: str = "oracle") -> list[str]:
    scenario = suite.scenarios("run")[0]
    cases = {c.name: c for c in self_test_cases(suite.reference, scenario)}
    chosen: SelfTestCase = cases[case]
    work = tmp_path / "work" / agent / case
    cell = run_case(suite, scenario, chosen, work, agent=agent)
    return [cell.verdict.verdict, *cell.verdict.reasons]


@pytest.fixture(scope="module")
def requires_stop(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    hooks = HOOKS + "  - event: Stop\n"
    return _suite(tmp_path_factory.mktemp("stop"), hooks)


def test_a_rep_of_an_agent_that_cannot_run_a_required_hook_is_an_error_naming_it(
    requires_stop: Suite, tmp_path: Path
) -> None:
    assert _played(requires_stop, "gemini", tmp_path)[:2] == [
        "ERROR",
        "hook-unsupported:gemini:Stop",
    ]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_an_agent_that_can_run_it_but_did_not_fails_for_the_missing_hook(
    agent: str, requires_stop: Suite, tmp_path: Path
) -> None:
    assert _played(requires_stop, agent, tmp_path)[:2] == ["FAIL", "hook-missing:Stop"]


def test_a_hook_required_of_named_agents_is_not_required_of_the_others(tmp_path: Path) -> None:
    suite = _suite(tmp_path, HOOKS + "  - event: Stop\n    agents: [claude]\n")
    assert _played(suite, "gemini", tmp_path)[0] == "PASS"
    assert _played(suite, "claude", tmp_path)[:2] == ["FAIL", "hook-missing:Stop"]


def test_a_named_agent_still_owes_the_hook_it_is_required_of(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path, HOOKS.replace("event: SessionStart", "event: SessionStart\n    agents: [codex]")
    )
    assert _played(suite, "claude", tmp_path, "hook-missing")[0] == "PASS"
    assert _played(suite, "codex", tmp_path, "hook-missing")[:2] == [
        "FAIL",
        "hook-missing:SessionStart",
    ]


def test_an_agent_evalkit_does_not_know_is_refused_when_the_suite_loads(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="agents.*claude"):
        _suite(tmp_path, HOOKS + "    agents: [cursor]\n").config  # noqa: B018

"""A scenario's own launch limits: the tighter of them and the command line's applies, and
its tools reach the CLI as --tools."""

from __future__ import annotations

from pathlib import Path

from evalkit.run.agents.claude import agent_command
from evalkit.run.rep import tighter


def test_the_tighter_limit_applies_whichever_side_gives_it() -> None:
    assert tighter(900.0, 120.0) == 120.0
    assert tighter(60.0, 120.0) == 60.0
    assert tighter(None, 8) == 8
    assert tighter(8, None) == 8
    assert tighter(None, None) is None


def test_a_scenario_s_tools_are_the_only_tools_the_cli_gets() -> None:
    command = agent_command(Path("/cli"), "m", [], tools=["Read", "Skill"])
    assert command[command.index("--tools") + 1] == "Read,Skill"
    assert "--tools" not in agent_command(Path("/cli"), "m", [])


def test_a_scenario_s_own_rep_count_applies_when_reps_is_not_given(tmp_path: Path) -> None:
    from evalkit.models import Launch
    from evalkit.run.rep import reps_for
    from evalkit.suite.config import load_suite
    from tests.unit.suite.test_plugin_evals import two_cases

    greets = load_suite(two_cases(tmp_path)).resolve("greets")  # its case says `runs: 2`
    assert greets.scenario.launch == Launch(reps=2)
    assert reps_for(greets, None) == 2
    assert reps_for(greets, 5) == 5

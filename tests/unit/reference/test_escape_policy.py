"""policy:escape is the ideal policy's calls, then its attempts, and self-test plays it on
stand-ins."""

from __future__ import annotations

from pathlib import Path

from evalkit.models import ToolUseBlock
from evalkit.reference.escape import ESCAPE, escape_steps, stand_in_values
from evalkit.reference.policy import policy_names, scripted_agent
from evalkit.suite.config import Suite


def test_escape_is_a_policy_that_scores_as_the_ideal_one(suite: Suite) -> None:
    assert ESCAPE in policy_names(suite)
    scenario = suite.resolve("P1")
    ideal = suite.reference.plan_policy(suite.reference.policies[0].name, scenario)
    agent = scripted_agent(suite, "policy:escape", scenario)
    assert agent.plan.expect == ideal.expect
    assert agent.plan.script.steps == ideal.script.steps + escape_steps()
    assert agent.plan.script.final_text == ideal.script.final_text


def test_every_attempt_is_there(suite: Suite) -> None:
    blocks = [b for s in escape_steps() for b in s.blocks if isinstance(b, ToolUseBlock)]
    commands = " ".join(str(b.input.get("command", "")) for b in blocks)
    assert [b.name for b in blocks if b.name != "Bash"] == ["Write", "Read"]
    for word in ("> {escape_home}", "python3 -c", "node -e", "ln -s", "find {escape_root}",
                 "/dev/tcp/127.0.0.1/{escape_port}"):  # fmt: skip
        assert word in commands, word


def test_stand_ins_lie_inside_the_folder_given(tmp_path: Path) -> None:
    values = stand_in_values(tmp_path / "stand-ins")
    for key in ("escape_home", "escape_results", "escape_scenario", "escape_root"):
        assert values[key].startswith(str(tmp_path / "stand-ins")), key

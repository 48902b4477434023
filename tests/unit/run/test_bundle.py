"""The bundle id names everything that can change a row, and never a secret or the Task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.records.kept.evidence import assert_secret_free, bundle_id, declarations
from evalkit.run.agent import base_environment
from evalkit.run.agents.claude import agent_command
from evalkit.run.context import RunContext
from evalkit.run.rep import run_declarations
from evalkit.run.sandbox import isolation_env
from evalkit.scoring.judge import ClaudeJudge, CommandJudge, FixedJudge, Judge
from evalkit.suite.config import Suite

SECRET_COMMAND = "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop judge --strict"


def bundle(
    suite: Suite,
    tmp_path: Path,
    judge: Judge,
    timeout: float = 900.0,
    max_retries: int = 2,
    rep_dir: str = "rep-a",
) -> dict[str, object]:
    ctx = RunContext(suite, tmp_path, tmp_path / "results.tsv", "r1", timeout=timeout)
    ctx.max_retries = max_retries
    scratch = tmp_path / rep_dir
    plugins = [scratch / "plugins" / "0-os-vault"]
    cli = tmp_path / "bin" / "claude"
    env = base_environment(isolation_env(suite, scratch / "sandbox"), scratch / "cfg", max_retries)
    command = agent_command(cli, "sonnet", plugins)
    run = run_declarations(ctx, suite, command, plugins, cli, env, judge, timeout)
    return declarations(suite, "sha256:s", "sonnet", "claude-x", "2.1.328", run)


def test_two_reps_of_one_configuration_share_a_bundle(suite: Suite, tmp_path: Path) -> None:
    a = bundle(suite, tmp_path, ClaudeJudge(Path("/x/claude"), "haiku"), rep_dir="rep-a")
    b = bundle(suite, tmp_path, ClaudeJudge(Path("/y/claude"), "haiku"), rep_dir="rep-b")
    assert bundle_id(a) == bundle_id(b)


@pytest.mark.parametrize(
    "change",
    [
        {"judge": ClaudeJudge(Path("/x/claude"), "sonnet")},
        {"judge": CommandJudge("echo YES")},
        {"timeout": 60.0},
        {"max_retries": 5},
    ],
)
def test_a_change_that_can_change_a_row_changes_the_bundle(
    suite: Suite, tmp_path: Path, change: dict[str, object]
) -> None:
    base = bundle(suite, tmp_path, ClaudeJudge(Path("/x/claude"), "haiku"))
    values: dict[str, object] = {"judge": ClaudeJudge(Path("/x/claude"), "haiku")}
    values.update(change)
    other = bundle(suite, tmp_path, **values)  # type: ignore[arg-type]
    assert bundle_id(base) != bundle_id(other)


def test_the_bundle_holds_neither_a_judge_command_nor_a_path(
    suite: Suite, tmp_path: Path
) -> None:
    decl = bundle(suite, tmp_path, CommandJudge(SECRET_COMMAND))
    text = json.dumps(decl)
    assert "sk-ant" not in text and "judge --strict" not in text
    assert str(tmp_path) not in text
    assert decl["judge"] == CommandJudge(SECRET_COMMAND).identity()
    assert "-p" in decl["cli_flags"]  # type: ignore[operator]
    assert decl["isolation_env"]["OS_VAULT_PATH"] == "{vault}"  # type: ignore[index]


def test_a_secret_shaped_value_anywhere_in_a_bundle_is_refused() -> None:
    assert_secret_free({"judge": "claude:haiku", "env": {"ANTHROPIC_API_KEY": "<set>"}})
    with pytest.raises(RefusedError, match="cli_flags"):
        assert_secret_free({"cli_flags": ["--x", "sk-ant-api03-abcdefghijklmnop"]})
    with pytest.raises(RefusedError, match="env.MY_TOKEN"):
        assert_secret_free({"env": {"MY_TOKEN": "plain-looking-value"}})


def test_a_fixed_judge_is_named_by_its_answer_not_its_text(suite: Suite, tmp_path: Path) -> None:
    yes = bundle(suite, tmp_path, FixedJudge("YES"))
    no = bundle(suite, tmp_path, FixedJudge("NO"))
    assert bundle_id(yes) != bundle_id(no)

"""Which judge a run asks: a command named in the environment, else the pinned CLI.

Choosing the judge is the run's business; how an answer is read is scoring's
(``evalkit.scoring.judge``), and only that part is hashed into the lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from evalkit.errors import PrerequisiteError
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT
from evalkit.run.prerequisites.claude_cli import find_cli
from evalkit.scoring.judge import ClaudeJudge, CommandJudge, Judge, UnavailableJudge
from evalkit.suite.config import Suite


def default_judge(
    suite: Suite,
    timeout: float = DEFAULT_JUDGE_TIMEOUT,
    notify: Callable[[str], None] | None = None,
) -> Judge:
    return judge_for(suite.config.judge.command_env, suite.config.judge.model, timeout, notify)


def judge_for(
    commands_env: list[str],
    model: str,
    timeout: float = DEFAULT_JUDGE_TIMEOUT,
    notify: Callable[[str], None] | None = None,
) -> Judge:
    """The first judge command set in the environment, else the real CLI, else an ERROR. A
    judge slower than a few seconds says so through notify; `timeout` bounds it."""
    for name in commands_env:
        command = os.environ.get(name)
        if command:
            return CommandJudge(command, timeout, notify)
    try:
        return ClaudeJudge(find_cli(), model, timeout, notify)
    except PrerequisiteError:
        return UnavailableJudge("judge-unavailable")


def judge_notice(suite: Suite, models: list[str]) -> str | None:
    """The line a grid starts with when a judge command stands in for the suite's judge on a
    real model's reps, naming the variable and the identity the rows will declare; None when
    no command is set or every model is a scripted policy (which answers for itself)."""
    if all(m.startswith("policy:") for m in models):
        return None
    for name in suite.config.judge.command_env:
        command = os.environ.get(name)
        if command:
            identity = CommandJudge(command).identity()
            return (
                f"judge: {name} is set: real models' reps are judged by {identity}, not "
                f"{suite.config.judge.model}; a folder judged both ways is not publishable"
            )
    return None

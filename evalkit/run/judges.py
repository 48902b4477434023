"""Which judge a run asks: a command named in the environment, else the pinned CLI.

Choosing the judge is the run's business; how an answer is read is scoring's
(``evalkit.scoring.judge``), and only that part is hashed into the lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from evalkit.errors import PrerequisiteError
from evalkit.run.claude_cli import find_cli
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT
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

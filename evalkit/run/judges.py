"""Which judge a run asks: a command named in the environment, else the pinned CLI.

Choosing the judge is the run's business; how an answer is read is scoring's
(``evalkit.scoring.judge``), and only that part is hashed into the lock.
"""

from __future__ import annotations

import os

from evalkit.errors import PrerequisiteError
from evalkit.run.claude_cli import find_cli
from evalkit.scoring.judge import ClaudeJudge, CommandJudge, Judge, UnavailableJudge
from evalkit.suite.config import Suite


def default_judge(suite: Suite) -> Judge:
    return judge_for(suite.config.judge.command_env, suite.config.judge.model)


def judge_for(commands_env: list[str], model: str) -> Judge:
    """The first judge command set in the environment, else the real CLI, else an ERROR."""
    for name in commands_env:
        command = os.environ.get(name)
        if command:
            return CommandJudge(command)
    try:
        return ClaudeJudge(find_cli(), model)
    except PrerequisiteError:
        return UnavailableJudge("judge-unavailable")

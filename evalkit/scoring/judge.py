"""The frozen-rubric judge: one final message in, YES or NO out.

A judge that fails or answers anything else makes the rep an ERROR, never a
guess. Verification replays the kept raw answer instead of asking a model again.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path

from evalkit.models import JudgeRecord
from evalkit.scoring.hashing import sha256_bytes

ANSWER = re.compile(r"^\W*(YES|NO)\b")


def build_prompt(rubric: str, final_message: str) -> str:
    return f"{rubric.rstrip()}\n\n---\nFinal message:\n\n{final_message}\n"


def prompt_hash(prompt: str) -> str:
    return "sha256:" + sha256_bytes(prompt.encode("utf-8"))


def interpret(prompt: str, raw: str, error: str | None = None) -> JudgeRecord:
    record = JudgeRecord(prompt_sha256=prompt_hash(prompt), raw_output=raw, error=error)
    if error is None:
        match = ANSWER.match(raw.strip())
        if match:
            record.answer = "YES" if match.group(1) == "YES" else "NO"
        else:
            record.error = "judge-answer-not-yes-no"
    return record


def ask_process(
    prompt: str,
    argv: list[str],
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> JudgeRecord:
    """Prompt on stdin, answer on stdout; a timeout or a non-zero exit is a judge error."""
    try:
        done = subprocess.run(
            argv, input=prompt.encode(), capture_output=True, timeout=timeout, cwd=cwd, env=env
        )
    except subprocess.TimeoutExpired:
        return interpret(prompt, "", "judge-timeout")
    raw = done.stdout.decode(errors="replace")
    if done.returncode != 0:
        return interpret(prompt, raw, f"judge-exit:{done.returncode}")
    return interpret(prompt, raw)


class Judge(ABC):
    @abstractmethod
    def ask(self, prompt: str) -> JudgeRecord: ...


class CommandJudge(Judge):
    """A shell command that reads the prompt on stdin and prints the answer."""

    def __init__(self, command: str, timeout: float = 300) -> None:
        self.command = command
        self.timeout = timeout

    def ask(self, prompt: str) -> JudgeRecord:
        return ask_process(prompt, ["/bin/sh", "-c", self.command], self.timeout)


class ClaudeJudge(Judge):
    """`claude -p --model <model>` in a throwaway config dir with no tools and no settings."""

    def __init__(self, cli: Path, model: str, timeout: float = 300) -> None:
        self.cli = cli
        self.model = model
        self.timeout = timeout

    def ask(self, prompt: str) -> JudgeRecord:
        with tempfile.TemporaryDirectory(prefix="evalkit-judge-") as scratch:
            env = dict(os.environ, CLAUDE_CONFIG_DIR=scratch, DISABLE_TELEMETRY="1")
            env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
            argv = [
                str(self.cli),
                "-p",
                "--model",
                self.model,
                "--setting-sources",
                "",
                "--tools",
                "",
                "--no-session-persistence",
            ]
            return ask_process(prompt, argv, self.timeout, cwd=Path(scratch), env=env)


class FixedJudge(Judge):
    """Always the same raw answer: self-test stubs and reference policies."""

    def __init__(self, raw: str) -> None:
        self.raw = raw

    def ask(self, prompt: str) -> JudgeRecord:
        return interpret(prompt, self.raw)


class ReplayJudge(Judge):
    """Replays a kept answer, and refuses one kept for a different prompt."""

    def __init__(self, kept: JudgeRecord | None) -> None:
        self.kept = kept

    def ask(self, prompt: str) -> JudgeRecord:
        if self.kept is None:
            return interpret(prompt, "", "judge-not-kept")
        if self.kept.prompt_sha256 != prompt_hash(prompt):
            return interpret(prompt, self.kept.raw_output, "judge-prompt-changed")
        return interpret(prompt, self.kept.raw_output, self.kept.error)


class UnavailableJudge(Judge):
    def __init__(self, reason: str) -> None:
        self.reason = reason

    def ask(self, prompt: str) -> JudgeRecord:
        return interpret(prompt, "", self.reason)

"""The frozen-rubric judge: one final message in, YES or NO out.

A judge that fails or answers anything else makes the rep an ERROR, never a
guess. Verification replays the kept raw answer instead of asking a model again.
"""

from __future__ import annotations

import os
import signal
import string
import subprocess
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

from evalkit.models import JudgeRecord, JudgeVote, Transcript
from evalkit.scoring.hashing import sha256_bytes

WAIT_NOTICE_SECONDS = 10.0
VOTE_SEPARATOR = "\n--- vote ---\n"
"""Between the raw answers of a judge asked several times, in `raw_output`."""


def final_message(transcript: Transcript) -> str:
    """The agent's last word: the result line's text, else its last text. All a judge reads
    of a rep (and what a rule's `final` condition searches), so it is scoring code."""
    if transcript.result is not None and transcript.result.result:
        return transcript.result.result
    return transcript.texts[-1] if transcript.texts else ""


def build_prompt(rubric: str, final_message: str) -> str:
    """The judge's whole input: the frozen rubric, then the final message."""
    return f"{rubric.rstrip()}\n\n---\nFinal message:\n\n{final_message}\n"


def prompt_hash(prompt: str) -> str:
    return "sha256:" + sha256_bytes(prompt.encode("utf-8"))


def _first_word(line: str) -> str:
    words = line.split()
    return words[0].strip(string.punctuation).upper() if words else ""


def _bare_word(line: str) -> str:
    return line.strip().strip(string.punctuation).strip().upper()


def read_answer(raw: str) -> tuple[str | None, str | None]:
    """(answer, error). The first word decides, case and surrounding punctuation aside: YES
    or NO. A later line that is the other word alone makes the answer contradictory (a
    reason line may begin with any word); an answer of neither word is not an answer. Both
    are judge errors, never a guess."""
    lines = [x for x in raw.strip().splitlines() if x.strip()]
    first = _first_word(lines[0]) if lines else ""
    if first not in ("YES", "NO"):
        return None, "judge-answer-not-yes-no"
    other = "NO" if first == "YES" else "YES"
    if any(_bare_word(x) == other for x in lines[1:]):
        return None, "judge-answer-contradictory"
    return first, None


def kept_votes(record: JudgeRecord) -> list[JudgeVote]:
    """The votes a record kept: its list, or, in a record kept before the list, its joined
    answers split on the separator, only where every part's first word is YES or NO (else
    none: the joined text replays whole, as it did)."""
    if record.votes:
        return list(record.votes)
    parts = record.raw_output.split(VOTE_SEPARATOR)
    lines = [[x for x in p.strip().splitlines() if x.strip()] for p in parts]
    if len(parts) < 2 or not all(ls and _first_word(ls[0]) in ("YES", "NO") for ls in lines):
        return []
    return [JudgeVote(raw_output=p) for p in parts]


def interpret(prompt: str, raw: str, error: str | None = None) -> JudgeRecord:
    record = JudgeRecord(prompt_sha256=prompt_hash(prompt), raw_output=raw, error=error)
    if error is None:
        answer, record.error = read_answer(raw)
        if answer == "YES":
            record.answer = "YES"
        elif answer == "NO":
            record.answer = "NO"
    return record


def ask_process(
    prompt: str,
    argv: list[str],
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    notify: Callable[[str], None] | None = None,
) -> JudgeRecord:
    """Prompt on stdin, answer on stdout; a timeout or a non-zero exit is a judge error.
    A judge slower than a few seconds is announced through notify, once, with its limit."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    first = min(WAIT_NOTICE_SECONDS, timeout) if notify is not None else timeout
    try:
        try:
            out, _ = proc.communicate(prompt.encode(), timeout=first)
        except subprocess.TimeoutExpired:
            if first >= timeout:
                raise
            if notify is not None:
                notify(f"waiting for the judge (up to {timeout:g} s; --judge-timeout sets it)")
            out, _ = proc.communicate(timeout=timeout - first)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return interpret(prompt, "", "judge-timeout")
    raw = out.decode(errors="replace")
    if proc.returncode != 0:
        return interpret(prompt, raw, f"judge-exit:{proc.returncode}")
    return interpret(prompt, raw)


class Judge(ABC):
    @abstractmethod
    def ask(self, prompt: str) -> JudgeRecord: ...

    def identity(self) -> str:
        """What names this judge in a bundle: a model, or a hash, never a command's text."""
        return type(self).__name__


class CommandJudge(Judge):
    """A shell command that reads the prompt on stdin and prints the answer."""

    def __init__(
        self, command: str, timeout: float = 300, notify: Callable[[str], None] | None = None
    ) -> None:
        self.command = command
        self.timeout = timeout
        self.notify = notify

    def ask(self, prompt: str) -> JudgeRecord:
        argv = ["/bin/sh", "-c", self.command]
        return ask_process(prompt, argv, self.timeout, notify=self.notify)

    def identity(self) -> str:
        return "command:sha256:" + sha256_bytes(self.command.encode())


class ClaudeJudge(Judge):
    """`claude -p --model <model>` in a throwaway config dir with no tools and no settings."""

    def __init__(
        self,
        cli: Path,
        model: str,
        timeout: float = 300,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.cli = cli
        self.model = model
        self.timeout = timeout
        self.notify = notify

    def identity(self) -> str:
        return f"claude:{self.model}"

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
            return ask_process(
                prompt, argv, self.timeout, cwd=Path(scratch), env=env, notify=self.notify
            )


class FixedJudge(Judge):
    """Always the same raw answer: self-test stubs and reference policies."""

    def __init__(self, raw: str) -> None:
        self.raw = raw

    def ask(self, prompt: str) -> JudgeRecord:
        return interpret(prompt, self.raw)

    def identity(self) -> str:
        return "fixed:sha256:" + sha256_bytes(self.raw.encode())


class ReplayJudge(Judge):
    """Replays a kept answer, and refuses one kept for a different prompt; a record of
    several votes answers the i-th ask with its i-th vote."""

    def __init__(self, kept: JudgeRecord | None) -> None:
        self.kept = kept
        self.votes = kept_votes(kept) if kept is not None else []
        self.asked = 0

    def ask(self, prompt: str) -> JudgeRecord:
        if self.kept is None:
            return interpret(prompt, "", "judge-not-kept")
        if self.kept.prompt_sha256 != prompt_hash(prompt):
            return interpret(prompt, self.kept.raw_output, "judge-prompt-changed")
        if self.votes:
            vote = self.votes[self.asked % len(self.votes)]
            self.asked += 1
            return interpret(prompt, vote.raw_output, vote.error)
        return interpret(prompt, self.kept.raw_output, self.kept.error)

    def identity(self) -> str:
        return "replay"


class UnavailableJudge(Judge):
    def __init__(self, reason: str) -> None:
        self.reason = reason

    def ask(self, prompt: str) -> JudgeRecord:
        return interpret(prompt, "", self.reason)

    def identity(self) -> str:
        return f"unavailable:{self.reason}"

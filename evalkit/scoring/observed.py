"""The runs of a suite's observed scripts, read from the log their wrappers wrote.

The wrapper (placed by `run/observe.py`) appends one JSON line when a script starts and
one when it ends. The log lies where the agent can write, so it is hostile input: it is
read without following links, capped, and every line must be one of the two shapes, in
order; anything else is a log that cannot be trusted, named in one token.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from evalkit.models import Model, ToolCall

OBSERVE_DIR = ".evalkit-observed"
"""Beside the fixture folders of a sandbox, so no folder diff and no checker sees it."""
LOG_NAME = "runs.jsonl"
MAX_LOG_BYTES = 1_000_000
MAX_RUNS = 2_000


def log_path(sandbox: Path) -> Path:
    return sandbox / OBSERVE_DIR / LOG_NAME


class _Line(Model):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=80)
    time: float
    line: int | None = Field(None, ge=0)
    """Complete transcript lines when it happened; None when the transcript was unreadable."""


class StartLine(_Line):
    event: Literal["start"]
    script: str = Field(max_length=1000)
    cwd: str = Field(max_length=4096)
    args: list[str] = Field(max_length=256)


class EndLine(_Line):
    event: Literal["end"]
    exit: int
    tree: str | None = Field(None, pattern=r"^[0-9a-f]{40}$")
    """Git's tree hash of the project as the run ended (`scoring/treehash.py`); None where
    it could not be taken, or in a log written before it was recorded."""


@dataclass(frozen=True)
class ObservedRun:
    """One run of an observed script: when it started and ended, in transcript lines."""

    script: str
    cwd: str
    args: tuple[str, ...]
    start_line: int | None
    end_line: int | None
    exit_code: int | None
    """None: it never ended (killed with the agent)."""
    end_tree: str | None = None
    """The project's tree hash as it ended; None when it never ended or had none."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class LogProblem(Exception):
    """The log is missing or cannot be trusted; the message is the row's reason token."""


def read_runs(sandbox: Path, scripts: list[str]) -> list[ObservedRun]:
    """Every observed run, in the order they started. Raises LogProblem."""
    data = _read_capped(log_path(sandbox))
    started: dict[str, StartLine] = {}
    ended: dict[str, EndLine] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw:
            continue
        try:
            event = json.loads(raw)
            kind = event.get("event") if isinstance(event, dict) else None
            record = (EndLine if kind == "end" else StartLine).model_validate(event)
        except (ValueError, ValidationError, UnicodeDecodeError):
            raise LogProblem(f"observed-log-malformed:line-{number}") from None
        if isinstance(record, StartLine):
            if record.id in started or record.script not in scripts:
                raise LogProblem(f"observed-log-malformed:line-{number}")
            started[record.id] = record
        elif record.id not in started or record.id in ended:
            raise LogProblem(f"observed-log-malformed:line-{number}")
        else:
            ended[record.id] = record
        if len(started) > MAX_RUNS:
            raise LogProblem("observed-log-too-many-runs")
    runs = []
    for run_id, start in started.items():
        end = ended.get(run_id)
        runs.append(
            ObservedRun(
                script=start.script,
                cwd=start.cwd,
                args=tuple(start.args),
                start_line=start.line,
                end_line=end.line if end is not None else None,
                exit_code=end.exit if end is not None else None,
                end_tree=end.tree if end is not None else None,
            )
        )
    return runs


def _read_capped(path: Path) -> bytes:
    try:
        info = path.lstat()
    except OSError:
        raise LogProblem("observed-log-missing") from None
    if not stat.S_ISREG(info.st_mode):
        raise LogProblem("observed-log-not-a-file")
    if info.st_size > MAX_LOG_BYTES:
        raise LogProblem("observed-log-too-large")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_LOG_BYTES + 1)
    except OSError:
        raise LogProblem("observed-log-unreadable") from None
    if len(data) > MAX_LOG_BYTES:
        raise LogProblem("observed-log-too-large")
    return data


def forged_run(runs: list[ObservedRun], calls: list[ToolCall]) -> str | None:
    """The reason token when a logged run cannot have come from the agent's own tool call,
    or None. The transcript is out of the agent's reach (evalkit alone writes it) and the
    log is not, so each run must sit inside a tool call's span there: started after its
    tool_use line was written and no later than its result line. A run no tool call holds
    was written by something else, a hook or a process left running, and one with no place
    in a rep whose transcript the wrapper could read was planted; either is tampering, an
    ERROR, never a run the agent made."""
    for run in runs:
        if run.start_line is None:
            return "tampering:observed-run-unplaced"
        if not any(holds(call, run) for call in calls):
            return "tampering:observed-run-outside-a-call"
    return None


def holds(call: ToolCall, run: ObservedRun) -> bool:
    """Whether the run started during the call: once its tool_use line (from 0) was written
    and no later than its result line. The call's own line may still be on its way when
    the script starts (the CLI writes it and starts the tool at once; evalkit copies the
    socket into the kept file a moment later, and Codex's pinned CLI beat that copy on a
    loaded machine), so a run that saw every line before it is held too. Where it ended is
    not asked: a script the call left running in the background may end after its result."""
    assert run.start_line is not None
    if run.start_line < call.line:
        return False
    return call.result_line is None or run.start_line <= call.result_line

"""The rep's timeline: tool calls and observed script runs, placed by transcript line.

A tool call spans from its tool_use line to its result line. The wrapper of an observed
script counts the transcript's complete lines when the script starts and ends, so a run
sits between two lines. Event a is before event b when a ended before b started; events
that overlap (parallel calls, a run inside the Bash call that started it) are neither.
An event with no place (a run whose wrapper could not read the transcript, a file changed
by no tool call that names it) makes a question of order undecided.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from evalkit.models import ToolCall
from evalkit.scoring.observed import ObservedRun

WRITERS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


@dataclass(frozen=True)
class Place:
    start: float
    end: float

    def before(self, other: Place) -> bool:
        return self.end < other.start


@dataclass
class Events:
    """The events a condition matched: those with a place, and how many have none."""

    placed: list[Place]
    unplaced: int = 0

    def after(self, cutoff: float) -> Events:
        """Those that started after cutoff (an unplaced one might have)."""
        return Events([p for p in self.placed if p.start > cutoff], self.unplaced)

    @property
    def any(self) -> bool:
        return bool(self.placed) or self.unplaced > 0


def call_place(call: ToolCall) -> Place:
    end = call.result_line if call.result_line is not None else math.inf
    return Place(float(call.line), float(end))


def run_place(run: ObservedRun) -> Place | None:
    if run.start_line is None:
        return None
    end = run.end_line - 0.5 if run.end_line is not None else math.inf
    return Place(run.start_line - 0.5, end)


def of_calls(calls: list[ToolCall]) -> Events:
    return Events([call_place(c) for c in calls])


def of_runs(runs: list[ObservedRun]) -> Events:
    places = [run_place(r) for r in runs]
    return Events([p for p in places if p is not None], sum(p is None for p in places))


def written_path(call: ToolCall, folder: str, project: str) -> str | None:
    """The folder-relative path a file-writing call names, or None when it names none
    inside folder."""
    if call.name not in WRITERS:
        return None
    raw = call.input.get("file_path") or call.input.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = os.path.normpath(os.path.join(project, raw))
    rel = os.path.relpath(path, folder)
    if rel == "." or rel.startswith(".."):
        return None
    return rel.replace(os.sep, "/")


def in_order(steps: list[Events]) -> bool | None:
    """Whether one event of each step happened in order; None when only an unplaced event
    could make it so. Taking each step's earliest-ending event that fits is never worse."""
    cutoff = -math.inf
    for step in steps:
        fits = [p for p in step.placed if p.start > cutoff]
        if not fits:
            return None if any(s.unplaced for s in steps) else False
        cutoff = min(p.end for p in fits)
    return True


def last_end(events: Events) -> float | None:
    """When the last of events ended (-inf when there were none); None when one has no
    place, so the last cannot be known."""
    if events.unplaced:
        return None
    return max((p.end for p in events.placed), default=-math.inf)

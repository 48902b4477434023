"""A rich progress bar for many reps: done/total, PASS/FAIL/ERROR so far, elapsed, ETA."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from evalkit.cli.app import err
from evalkit.run.runner import RepOutcome


class RepProgress:
    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.tally: Counter[str] = Counter()
        self.task = progress.add_task("reps", total=total, tally=self._text())

    def _text(self) -> str:
        return " ".join(f"{k} {self.tally[k]}" for k in ("PASS", "FAIL", "ERROR"))

    def done(self, outcome: RepOutcome) -> None:
        self.tally[outcome.verdict.verdict] += 1
        self.progress.update(self.task, advance=1, tally=self._text())


@contextmanager
def rep_progress(total: int) -> Iterator[RepProgress]:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[tally]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=False) as progress:
        yield RepProgress(progress, total)

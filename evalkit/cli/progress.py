"""Progress over many reps: done/total, PASS/FAIL/ERROR and breaches so far, elapsed, ETA.

A rich bar on a terminal; one plain line per finished rep when stderr is piped or
redirected, so a log file holds every rep rather than a smear of redraws.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from evalkit.cli.app import err
from evalkit.run.rep import RepOutcome


def breach_count(outcome: RepOutcome) -> int:
    """Reasons naming a breach (a write into a guarded real-world path)."""
    return sum(1 for r in outcome.verdict.reasons if "breach" in r.split(":", 1)[0])


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class RepProgress:
    def __init__(self, total: int, progress: Progress | None, console: Console) -> None:
        self.total = total
        self.progress = progress
        self.console = console
        self.tally: Counter[str] = Counter()
        self.finished = 0
        self.started = time.monotonic()
        self.task = (
            progress.add_task("reps", total=total, tally=self._text())
            if progress is not None
            else None
        )
        self.changed: dict[str, list[str]] = {}

    def _text(self) -> str:
        verdicts = " ".join(f"{k} {self.tally[k]}" for k in ("PASS", "FAIL", "ERROR"))
        return f"{verdicts} breaches {self.tally['breaches']}"

    def done(self, outcome: RepOutcome) -> None:
        self.tally[outcome.verdict.verdict] += 1
        self.tally["breaches"] += breach_count(outcome)
        self.finished += 1
        for change in guard_changes(outcome):
            self.changed.setdefault(change, []).append(rep_name(outcome))
        if self.progress is not None and self.task is not None:
            if breach_reasons(outcome):  # said at once, above the live bar
                self.progress.console.print(breach_message(outcome), style="bold red", markup=False)
            self.progress.update(self.task, advance=1, tally=self._text())
            return
        elapsed = time.monotonic() - self.started
        left = self.total - self.finished
        eta = _clock(elapsed / self.finished * left) if self.finished else "?"
        self.console.print(
            Text(
                f"[{self.finished}/{self.total}] {rep_name(outcome)}: "
                f"{outcome.verdict.verdict} | {self._text()} | "
                f"elapsed {_clock(elapsed)} eta {eta}"
                + (f" | {breach_message(outcome)}" if breach_reasons(outcome) else "")
            ),
            soft_wrap=True,
        )

    def guard_summary(self) -> list[str]:
        """Grid level: each guarded path that changed, and every rep whose window saw it."""
        return [
            f"{change.partition(':')[2]} changed during {len(reps)} rep(s): {', '.join(reps)}"
            for change, reps in sorted(self.changed.items())
        ]


def breach_reasons(outcome: RepOutcome) -> list[str]:
    return [r for r in outcome.verdict.reasons if r.startswith("real-vault-breach:")]


def guard_changes(outcome: RepOutcome) -> list[str]:
    found = outcome.verdict.reasons + getattr(outcome.verdict, "flags", [])
    return [r for r in found if r.startswith("real-vault-changed:")]


def rep_name(outcome: RepOutcome) -> str:
    """The rep as a person finds it again: a variant other than the suite's own wording is
    named, as a grid of several variants runs them side by side."""
    variant = outcome.row.variant
    named = f" variant {variant}" if variant and variant != "suite" else ""
    return f"{outcome.scenario} {outcome.model}{named} rep {outcome.rep}"


def breach_message(outcome: RepOutcome) -> str:
    return (
        f"REAL-VAULT BREACH in {rep_name(outcome)} ({outcome.verdict.verdict}): "
        + "; ".join(breach_reasons(outcome))
    )


@contextmanager
def rep_progress(total: int, console: Console | None = None) -> Iterator[RepProgress]:
    """A bar when the console is a terminal, plain lines otherwise."""
    console = console or err
    if not console.is_terminal:
        yield RepProgress(total, None, console)
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("{task.fields[tally]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        yield RepProgress(total, progress, console)

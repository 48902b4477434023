"""What `evalkit verify` finds: one trial per kept attempt, and the folder's problems
beside them."""

from __future__ import annotations

from dataclasses import dataclass, field

from evalkit.models import EvidenceLine
from evalkit.records.verify.calibration import Calibration

UNBACKED = "row without evidence"


TAMPERED = "tampered"
"""A trial whose manifest line names a path outside the folder: never read, never replayed."""


@dataclass
class Trial:
    name: str
    problems: list[str] = field(default_factory=list)
    verdict: str = ""
    older_code: bool = False
    """Scored by scoring code other than the current one: its records are held to each other,
    not re-derived; `evalkit results rescore` scores it again beside the old row."""
    rescored: bool = False
    """A later re-score replaced this rep's row (the old row stays in the file)."""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyReport:
    trials: list[Trial] = field(default_factory=list)
    count_problems: list[str] = field(default_factory=list)
    publish_problems: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    """file:line of each plan, manifest or results line that did not read, skipped"""
    grid_gaps: list[str] = field(default_factory=list)
    """why a sharded grid the folder holds is not whole (missing shards, a shard twice)"""
    calibration: Calibration | None = None
    """set for a calibration folder, which is held to its expected verdicts, not published"""

    @property
    def all_rederived(self) -> bool:
        return all(t.ok for t in self.trials) and not self.count_problems and not self.unreadable

    @property
    def publishable(self) -> bool:
        return self.all_rederived and bool(self.trials) and not self.publish_problems

    @property
    def failed_trials(self) -> int:
        return sum(1 for t in self.trials if not t.ok)


def trial_name(line: EvidenceLine) -> str:
    name = f"{line.run_id} {line.scenario} {line.model} rep-{line.rep}"
    if line.attempt > 1 or line.superseded_by is not None:
        name += f" attempt-{line.attempt}"
    if line.superseded_by is not None:
        name += f" (superseded by attempt-{line.superseded_by}: {line.retry_reason})"
    return name

"""The verdict `evalkit verify` leaves in a results folder, read back by `report`.

Re-deriving every rep is the slow part of looking at a folder, so `verify` does it and
records what it concluded, keyed by the hashes of the records it read (plans, manifest,
results files, a listing of the evidence, the scoring code). `report` reads the verdict
only while every hash still matches: a row appended by hand, an edited plan, new reps or
other scoring code make the record stale, and a stale or missing record is never read as
PUBLISHABLE.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from evalkit import __version__
from evalkit.errors import RefusedError
from evalkit.models import Plan, VerificationRecord
from evalkit.records.folder.imported import imported_problem
from evalkit.records.folder.manifest import ManifestFacts
from evalkit.records.folder.workdir import Workdir
from evalkit.records.verify.rederive import verify_workdir
from evalkit.records.verify.replay import scoring_hash
from evalkit.records.verify.result import VerifyReport
from evalkit.suite.config import Suite

SCORING = "scoring code"
VERDICT = "the recorded verdict"
"""The key's entry sealing what verify concluded (its counts, publishability and problems)
together with the rest of the key: a record edited by hand no longer matches it."""

State = Literal["fresh", "stale", "missing", "unreadable"]


def record_key(
    suite: Suite, records: Workdir, plans: list[Plan], lines: Sequence[ManifestFacts]
) -> dict[str, str]:
    """What a verdict on the folder depends on, by hash."""
    return {**records.record_hashes(plans, lines), SCORING: scoring_hash(suite)}


def seal(record: VerificationRecord) -> str:
    """The hash of a record's verdict and of the key it was drawn from."""
    drawn = {k: v for k, v in record.key.items() if k != VERDICT}
    verdict = record.model_dump(include={"suite", "trials", "failed_trials", "all_rederived",
                                         "publishable", "problems"})  # fmt: skip
    canonical = json.dumps({"key": drawn, **verdict}, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def check_own_folder(suite: Suite, records: Workdir) -> None:
    """A folder holding another suite's reps is refused: replayed against this suite's
    fixtures and scenarios, every row would read as tampering."""
    others = records.recorded_suites() - {suite.name}
    if others:
        raise RefusedError(
            f"{records.root}: holds reps of suite {', '.join(sorted(others))}, but the suite "
            f"given is {suite.name}; pass that suite's folder with --suite"
        )


def verify_and_record(suite: Suite, workdir: Path) -> VerifyReport:
    """`verify_workdir`, then its verdict written to the folder's verification record, keyed
    by the records as they were when verification began. An imported folder has no evidence
    to re-derive its rows from: it is said so, and nothing is recorded in it."""
    records = Workdir(workdir)
    check_own_folder(suite, records)
    imported = imported_problem(records.root)
    if imported is not None:
        return VerifyReport(count_problems=[imported], publish_problems=[imported])
    key = record_key(
        suite, records, records.read_plans().items, records.read_evidence_index().items
    )
    report = verify_workdir(suite, records.root)
    record = VerificationRecord(
        suite=suite.name,
        verified_at=datetime.now(UTC).isoformat(timespec="seconds"),
        evalkit_version=__version__,
        key=key,
        trials=len(report.trials),
        failed_trials=report.failed_trials,
        all_rederived=report.all_rederived,
        publishable=report.publishable,
        problems=list(report.publish_problems),
    )
    record.key[VERDICT] = seal(record)
    records.write_verification(record)
    return report


@dataclass
class Verification:
    """What the folder's verification record says now."""

    state: State
    record: VerificationRecord | None = None
    changed: list[str] = field(default_factory=list)
    """for a stale record: what changed since it was written"""

    def problems(self, workdir: Path) -> list[str]:
        """Why the folder is not publishable by this record; empty when it is."""
        again = f"run `evalkit verify {workdir}`"
        if self.state == "unreadable":
            return [f"the verification record does not read: {again}"]
        if self.state == "missing" or self.record is None:
            return [f"not verified: {again} to re-derive every row from its evidence"]
        if self.state == "stale":
            return [
                f"the verification record is stale ({', '.join(self.changed)} changed since "
                f"verify ran at {self.record.verified_at}): {again}"
            ]
        if self.record.publishable:
            return []
        return self.record.problems or ["not every row re-derives from its evidence"]


def read_verification(
    suite: Suite, records: Workdir, plans: list[Plan], lines: Sequence[ManifestFacts]
) -> Verification:
    """The folder's verification record held against the records as they are now."""
    try:
        record = records.read_verification()
    except (ValidationError, ValueError, OSError):
        return Verification("unreadable")
    if record is None:
        return Verification("missing")
    now = {**record_key(suite, records, plans, lines), VERDICT: seal(record)}
    changed = sorted(k for k in set(now) | set(record.key) if now.get(k) != record.key.get(k))
    if record.suite != suite.name:
        changed.insert(0, f"the suite (recorded for {record.suite})")
    if changed:
        return Verification("stale", record, changed)
    return Verification("fresh", record)

"""How far a report may be trusted: the publishability `verify` recorded while the records it
re-derived are unchanged, or a calibration folder's own verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.errors import RefusedError
from evalkit.models import (
    Plan,
)
from evalkit.records.folder.imported import imported_problem
from evalkit.records.folder.manifest import ManifestFacts
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.model import (
    Publishability,
)
from evalkit.records.verify.calibration import NOT_A_MEASUREMENT
from evalkit.records.verify.record import read_verification
from evalkit.suite.config import Suite


def check_suite(
    suite: Suite, records: Workdir, plans: list[Plan], lines: Sequence[ManifestFacts]
) -> None:
    """A folder recorded for another suite is read with that suite, or not at all: its
    scenarios would otherwise all read as unknown."""
    recorded = records.recorded_suites(plans, lines)
    if recorded and suite.name not in recorded:
        raise RefusedError(
            f"{records.root}: holds reps of suite {', '.join(sorted(recorded))}, but the suite "
            f"given is {suite.name}; pass that suite's folder with --suite"
        )


def verified_publishability(
    suite: Suite, records: Workdir, plans: list[Plan], lines: Sequence[ManifestFacts]
) -> Publishability:
    """verify's recorded verdict, while the records it was drawn from are unchanged; an
    imported folder's first problem is that it was imported."""
    imported = imported_problem(records.root)
    if imported is not None:
        problems, state, at = [imported], "missing", None
    elif not records.has_evidence_index():
        problems, state, at = ["no evidence manifest"], "missing", None
    else:
        found = read_verification(suite, records, plans, lines)
        problems, state = found.problems(records.root), found.state
        at = found.record.verified_at if found.record else None
    verdict = "NOT PUBLISHABLE: " + "; ".join(problems) if problems else "PUBLISHABLE"
    return Publishability(
        publishable=not problems,
        problems=problems,
        verdict=verdict,
        verification=state,
        verified_at=at,
    )


def calibrated_publishability(
    suite: Suite, records: Workdir, plans: list[Plan], lines: Sequence[ManifestFacts], headline: str
) -> Publishability:
    """A calibration folder is never published: its verdict line is how its cells came out,
    and its problems say whether verify re-derived every row."""
    problems = [NOT_A_MEASUREMENT]
    state, at = "missing", None
    if records.has_evidence_index():
        found = read_verification(suite, records, plans, lines)
        state, at = found.state, found.record.verified_at if found.record else None
        if found.state != "fresh":
            problems += found.problems(records.root)
        elif found.record is not None and not found.record.all_rederived:
            problems.append(
                f"not every row re-derives from its evidence: see `evalkit verify {records.root}`"
            )
    return Publishability(
        publishable=False, problems=problems, verdict=headline, verification=state, verified_at=at
    )

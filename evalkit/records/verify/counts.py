"""The folder-level counts: rows, manifest lines and planned reps, each rep once, each row
backed by evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.models import EvidenceLine, Plan, ResultRow
from evalkit.records.folder.manifest import ManifestFacts
from evalkit.records.folder.results import read_results
from evalkit.records.folder.workdir import (
    CellCount,
    RepKey,
    Workdir,
    evidence_key,
    grid_gaps,
    tally,
)
from evalkit.records.verify.result import UNBACKED, VerifyReport, trial_name


def final_lines(lines: list[EvidenceLine]) -> list[EvidenceLine]:
    """The attempt of each rep that counts: the one no later attempt superseded."""
    return [x for x in lines if x.superseded_by is None]


def rescored_keys(lines: Iterable[ManifestFacts]) -> set[RepKey]:
    """Reps whose row a later `evalkit results rescore` replaced (their rows stay in the file)."""
    return {(x.rescore_of, x.scenario, x.model, x.rep) for x in lines if x.rescore_of}


@dataclass
class RowsByRep:
    """Every row of every results file the folder names, by rep, with where it was read."""

    by_key: dict[RepKey, list[ResultRow]] = field(default_factory=dict)
    where: dict[RepKey, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.by_key.values())


def rows_by_rep(records: Workdir, files: list[Path]) -> RowsByRep:
    found = RowsByRep()
    for path in files:
        read = read_results(path)
        found.problems += [
            f"{records.relative(path.parent)}/{p}".lstrip("./") for p in read.problems
        ]
        where = records.relative(path)
        for number, row in read.rows:
            key = (row.run_id, row.scenario, row.model, row.rep)
            found.by_key.setdefault(key, []).append(row)
            found.where.setdefault(key, []).append(f"{where}:{number}")
    return found


def count_reps(
    report: VerifyReport, lines: list[EvidenceLine], rows: RowsByRep, plans: list[Plan]
) -> list[CellCount]:
    attempts = {(*evidence_key(x), x.attempt) for x in lines}
    for x in lines:
        if x.superseded_by is not None and (*evidence_key(x), x.superseded_by) not in attempts:
            report.count_problems.append(
                f"{trial_name(x)}: attempt-{x.superseded_by} has no manifest line"
            )
    lines = final_lines(lines)
    in_manifest = Counter(evidence_key(x) for x in lines)
    for key, n in sorted(in_manifest.items()):
        if n > 1:
            report.count_problems.append(f"{n} manifest lines for {' '.join(map(str, key))}")
    for key in sorted(set(rows.by_key) - set(in_manifest)):
        named = " ".join(map(str, key)) if key[0] else " ".join(map(str, key[1:])) + " (no run id)"
        for where in rows.where[key]:
            report.count_problems.append(f"{where}: {UNBACKED}: {named}")
    counts = tally(plans, in_manifest.elements())
    for cell in counts:
        if not cell.complete:
            report.count_problems.append(f"plan {cell.describe()}")
    report.grid_gaps = grid_gaps(plans)
    report.count_problems += report.grid_gaps
    expected = sum(c.expected for c in counts)
    if not (rows.count == len(lines) == expected):
        report.count_problems.append(
            f"counts differ: {rows.count} TSV row(s), {len(lines)} manifest line(s), "
            f"{expected} planned rep(s)"
        )
    return counts

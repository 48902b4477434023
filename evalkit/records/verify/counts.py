"""The folder-level counts: rows, manifest lines and planned reps, each rep once, each row
backed by evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

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

AttemptKey = tuple[str, str, str, int, int]
"""A rep's key and one attempt's number."""

F = TypeVar("F", bound=ManifestFacts)


def resumed_attempts(lines: Iterable[ManifestFacts]) -> set[AttemptKey]:
    """Attempts recorded `ERROR interrupted` that a later `grid --resume` ran again: their
    manifest lines, rows and evidence stay in the folder, named, and count no more."""
    return {(*evidence_key(x), x.supersedes) for x in lines if x.supersedes is not None}


def final_lines(lines: list[F]) -> list[F]:
    """The attempt of each rep that counts: the one no later attempt superseded, neither a
    retry nor a resumed run of an interrupted one."""
    resumed = resumed_attempts(lines)
    return [
        x for x in lines if x.superseded_by is None and (*evidence_key(x), x.attempt) not in resumed
    ]


def rescored_keys(lines: Iterable[ManifestFacts]) -> set[RepKey]:
    """Reps whose row a later `evalkit results rescore` replaced (their rows stay in the file)."""
    return {(x.rescore_of, x.scenario, x.model, x.rep) for x in lines if x.rescore_of}


def counted_rows(rows: Iterable[ResultRow], lines: Iterable[ManifestFacts]) -> list[ResultRow]:
    """The rows `report`, `verify`, `compare` and `gate` count: every row but those a later
    `rescore` or a resumed run of an interrupted attempt replaced (kept in the file)."""
    lines = list(lines)
    rescored = rescored_keys(lines)
    resumed = resumed_attempts(lines)
    return [r for r in rows if not replaced_row(r, rescored, resumed)]


def replaced_row(row: ResultRow, rescored: set[RepKey], resumed: set[AttemptKey]) -> bool:
    """Whether a later record replaced this row (it stays in the file, uncounted)."""
    key = (row.run_id, row.scenario, row.model, row.rep)
    return key in rescored or (*key, row.attempt) in resumed


@dataclass
class RowsByRep:
    """Every row of every results file the folder names, by rep, with where it was read."""

    by_key: dict[RepKey, list[ResultRow]] = field(default_factory=dict)
    where: dict[RepKey, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.by_key.values())

    def counted(self, resumed: set[AttemptKey]) -> int:
        """The rows but those of attempts a resumed run replaced."""
        return sum(1 for k, v in self.by_key.items() for r in v if (*k, r.attempt) not in resumed)


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
    resumed = resumed_attempts(lines)
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
    if not (rows.counted(resumed) == len(lines) == expected):
        report.count_problems.append(
            f"counts differ: {rows.counted(resumed)} TSV row(s), {len(lines)} manifest line(s), "
            f"{expected} planned rep(s)"
        )
    return counts

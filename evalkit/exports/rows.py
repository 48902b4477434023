"""The rows every export reads of a results folder: the ones `report` counts, in file order,
with the folder's manifest lines. One reader, so an Inspect log and a trace of one folder hold
the same reps, and a folder that is not there is said the same way by every format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from evalkit.errors import ConfigError, NotFoundError
from evalkit.models import EvidenceLine, Plan, ResultRow
from evalkit.records.folder.manifest import ManifestFacts, ManifestSummary
from evalkit.records.folder.results import read_results
from evalkit.records.folder.workdir import RESULTS, Workdir
from evalkit.records.report.publishability import check_suite
from evalkit.records.verify.counts import counted_rows
from evalkit.suite.config import Suite

Line = TypeVar("Line", bound=ManifestFacts)


@dataclass
class FolderRows(Generic[Line]):
    """What an export reads of a folder: its plans, its counted rows and its manifest lines."""

    records: Workdir
    plans: list[Plan]
    rows: list[ResultRow]
    lines: list[Line]


def results_folder(folder: Path) -> Workdir:
    """FOLDER as a results folder, refused in one line when there is none there, as `compare`
    and `migrate` refuse it: a mistyped name is never read as a folder holding no rows."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder}: a file, not a results folder")
    if not folder.is_dir():
        raise NotFoundError(f"{folder}: no such results folder; nothing to export")
    return Workdir(folder)


def summaries(records: Workdir) -> list[ManifestSummary]:
    """The manifest as `report` reads it (no kept files' names): enough for a trace."""
    return records.read_manifest_summaries().items if records.has_evidence_index() else []


def evidence_lines(records: Workdir) -> list[EvidenceLine]:
    """The whole manifest, kept files' names included: what a log's transcripts are read by."""
    return records.read_evidence_index().items if records.has_evidence_index() else []


def read_rows(
    folder: Path,
    manifest: Callable[[Workdir], list[Line]],
    *,
    suite: Suite | None = None,
    plans_suffice: bool = False,
) -> FolderRows[Line]:
    """The rows `report` counts (a rep a later rescore or resumed run replaced is read once,
    as last recorded), with the manifest read by `manifest`. A folder recorded for another
    suite than `suite` is refused, as `report` refuses it; so is one without rows, unless
    `plans_suffice` and it holds a plan (a trace of a planned grid is its root span alone)."""
    records = results_folder(folder)
    plans = records.read_plans().items
    lines = manifest(records)
    if suite is not None:
        check_suite(suite, records, plans, lines)
    every = (row for path in records.results_files(plans, lines)
             for row in read_results(path).plain_rows)  # fmt: skip
    rows = counted_rows(every, lines)
    if not rows and not (plans_suffice and plans):
        raise NotFoundError(
            f"{records.root / RESULTS}: no rows to export; run `evalkit run` or `evalkit grid` "
            "into this folder first"
        )
    return FolderRows(records, plans, rows, lines)

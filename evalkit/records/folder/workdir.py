"""The results folder: the one owner of its file names, its appends and its counts.

A results folder holds what a run set out to do (`plans.jsonl`), one line per rep
saying where its evidence is (`manifest.jsonl`), the evidence itself (`evidence/`)
and the rows (`results.tsv`, or a file a plan names). Every command that reads or
writes one goes through `Workdir`, so the rules for reading a damaged line, for
appending safely and for counting planned against recorded reps exist once.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from evalkit.errors import ConfigError, NotFoundError
from evalkit.models import EvidenceLine, Plan, VerificationRecord
from evalkit.records.folder.appendlog import append_locked, check_appendable
from evalkit.records.folder.gridlock import hold_grid_lock
from evalkit.records.folder.jsonl import json_lines
from evalkit.records.folder.manifest import ManifestFacts, ManifestSummary, read_summaries
from evalkit.records.folder.regular import check_record
from evalkit.suite.subject import SUBJECTS

RESULTS = "results.tsv"
PLANS = "plans.jsonl"
EVIDENCE_INDEX = "manifest.jsonl"
"""One line per rep: where its evidence is and what it was run against."""
EVIDENCE = "evidence"
GRID_LOCK = "grid.lock"
VERIFIED = "verified.json"
"""What `evalkit verify` last concluded, keyed by hashes of the records it read."""

RepKey = tuple[str, str, str, int]
"""run_id, scenario, model, rep: what names one rep in every file of the folder."""

T = TypeVar("T", bound=BaseModel)
Item = TypeVar("Item")


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


@dataclass
class Read(Generic[Item]):
    """What a JSON-lines file held: the lines that read, and one problem per line that did not."""

    items: list[Item] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CellCount:
    """Planned against recorded reps of one plan cell (run id, scenario, model)."""

    run_id: str
    scenario: str
    model: str
    planned: int
    recorded: int
    unrecorded: tuple[int, ...]
    """planned rep numbers of this run with nothing recorded (none once the cell is full)"""
    skipped: int = 0
    """of the unrecorded reps, those the run chose not to start (a budget reached)"""
    skip_reason: str = ""

    @property
    def expected(self) -> int:
        """Reps that should be recorded: planned, less those the run gave up on."""
        return self.planned - self.skipped

    @property
    def complete(self) -> bool:
        return self.expected == self.recorded

    def describe(self) -> str:
        return (
            f"{self.run_id} {self.scenario} {self.model}: "
            f"{self.planned} rep(s) planned, {self.recorded} recorded"
            + (f", {self.skipped} {self.skip_reason}" if self.skipped else "")
        )


def tally(plans: Iterable[Plan], recorded: Iterable[RepKey]) -> list[CellCount]:
    """The one count of planned against recorded reps, per plan cell.

    `verify` counts manifest lines (each rep's final attempt), `report` counts the rows
    it reads, and `grid --resume` runs a plan's unrecorded reps; all three count here.
    Reps a run gave up on (a budget reached) are counted as skipped, less any a later
    resume recorded. A cell recorded but never planned appears with planned 0.
    """
    plans = list(plans)
    planned: Counter[tuple[str, str, str]] = Counter()
    numbers: dict[tuple[str, str, str], list[int]] = {}
    for plan in plans:
        for cell in plan.cells:
            planned[(plan.run_id, cell.scenario, cell.model)] += cell.reps
            numbers.setdefault((plan.run_id, cell.scenario, cell.model), []).extend(cell.numbers())
    keys = list(recorded)
    have = Counter((k[0], k[1], k[2]) for k in keys)
    reps: dict[tuple[str, str, str], set[int]] = {}
    for key in keys:
        reps.setdefault((key[0], key[1], key[2]), set()).add(key[3])
    skipped: dict[tuple[str, str, str], tuple[str, int]] = {}
    for plan in plans:
        for cell in plan.skipped:
            at = (plan.run_id, cell.scenario, cell.model)
            before = skipped.get(at, ("", 0))[1]
            still = min(before + cell.reps, max(0, planned[at] - have[at]))
            if still:
                skipped[at] = (plan.skip_reason, still)
    counts = []
    for cell_key in sorted(set(planned) | set(have)):
        done = reps.get(cell_key, set())
        missing = max(0, planned[cell_key] - have[cell_key])
        counts.append(
            CellCount(
                run_id=cell_key[0],
                scenario=cell_key[1],
                model=cell_key[2],
                planned=planned[cell_key],
                recorded=have[cell_key],
                unrecorded=tuple(
                    r for r in dict.fromkeys(numbers.get(cell_key, [])) if r not in done
                )[:missing],
                skipped=skipped.get(cell_key, ("", 0))[1],
                skip_reason=skipped.get(cell_key, ("", 0))[0],
            )
        )
    return counts


def grid_gaps(plans: Iterable[Plan]) -> list[str]:
    """Why the sharded grids the plans belong to are not whole, one line each (none when
    they are).

    A sharded grid is whole with all N of its shards, every one cut with the same N, and
    each of its reps planned once: the grid digest and the cell name a rep, not the run id,
    so one shard run twice under two run ids is named, not counted twice. A lone shard is
    one part of a grid, never a whole one.
    """
    by_digest: dict[str, list[Plan]] = {}
    for plan in plans:
        if plan.grid_digest and plan.shard:
            by_digest.setdefault(plan.grid_digest, []).append(plan)
    gaps = []
    for digest, group in sorted(by_digest.items()):
        labels = sorted({p.shard for p in group}, key=_shard_order)
        counts = sorted({_shard_order(label)[1] for label in labels})
        if len(counts) > 1:
            gaps.append(
                f"grid {digest}: shards cut with different N ({', '.join(labels)}); "
                "they are not slices of one grid"
            )
            continue
        count = counts[0]
        present = {_shard_order(label)[0] for label in labels}
        missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in present]
        runs: dict[str, set[str]] = {}
        reps: Counter[tuple[str, str, str, int]] = Counter()
        for plan in group:
            runs.setdefault(plan.shard, set()).add(plan.run_id)
            for cell in plan.cells:
                reps.update((cell.scenario, cell.model, cell.variant, r) for r in cell.numbers())
        total = max(p.grid_cells for p in group)
        for label in labels:
            if len(runs[label]) > 1:
                gaps.append(
                    f"grid {digest}: shard {label} under {len(runs[label])} run ids "
                    f"({', '.join(sorted(runs[label]))}); a rep of a grid counts once"
                )
        twice = sum(1 for n in reps.values() if n > 1)
        if twice and not any(len(r) > 1 for r in runs.values()):
            gaps.append(f"grid {digest}: {twice} rep(s) planned more than once")
        absent = f": {max(0, total - len(reps))} of its {total} rep(s) not planned here"
        if missing:
            gaps.append(
                f"grid {digest}: missing shard(s) {', '.join(missing)}" + (absent if total else "")
            )
        elif total and len(reps) != total:
            gaps.append(f"grid {digest}: {len(reps)} of its {total} rep(s) planned")
    return gaps


def _shard_order(label: str) -> tuple[int, int]:
    index, _, count = label.partition("/")
    try:
        return int(index), int(count)
    except ValueError:
        return 0, 0


def _read_jsonl(
    path: Path,
    model: type[T],
    what: str,
    keep: Callable[[T], T] | None = None,
    data: bytes | None = None,
) -> Read[T]:
    """Every line that reads, each passed through `keep` as it is read; from `data` when the
    caller has read the file's bytes already."""
    found: Read[T] = Read()
    if data is None:
        check_record(path)
    if data is None and not path.is_file():
        return found
    number = 0
    with io.BytesIO(data) if data is not None else path.open("rb") as stream:
        for text in json_lines(stream):  # line by line: a 100,000-rep manifest is 280 MB
            number += 1
            if not text.strip():
                continue
            try:  # parsed straight into the record: no dict of the line in between
                item = model.model_validate_json(text)
                found.items.append(keep(item) if keep else item)
            except (ValidationError, TypeError):
                found.problems.append(f"{path.name}:{number}: unreadable {what} line")
    return found


class Workdir:
    """One results folder. Paths inside it are kept relative to it in every record."""

    def __init__(self, root: Path) -> None:
        """Refuses, before any command reads or writes the folder, records in it that are
        not regular files (`check_records`)."""
        self.root = root.resolve()
        self.check_records()

    def __repr__(self) -> str:
        return f"Workdir({str(self.root)!r})"

    # ------------------------------------------------------------------ names

    @property
    def results(self) -> Path:
        """The default results file; a plan may name another."""
        return self.root / RESULTS

    @property
    def plans(self) -> Path:
        return self.root / PLANS

    @property
    def evidence_index(self) -> Path:
        return self.root / EVIDENCE_INDEX

    @property
    def evidence(self) -> Path:
        return self.root / EVIDENCE

    @property
    def grid_lock(self) -> Path:
        return self.root / GRID_LOCK

    @property
    def verification(self) -> Path:
        return self.root / VERIFIED

    def path(self, relative: str) -> Path:
        """A path kept in a record (relative to the folder, or absolute) as a path."""
        return self.root / relative

    def relative(self, path: Path) -> str:
        """path relative to the folder where it lies under it, else absolute."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path.resolve())

    def evidence_folder(
        self, run_id: str, scenario: str, model: str, rep: int, attempt: int = 1
    ) -> Path:
        """Attempt 1 keeps `rep-<k>`; a retry keeps its own `rep-<k>.attempt-<n>` beside it."""
        name = f"rep-{rep}" if attempt == 1 else f"rep-{rep}.attempt-{attempt}"
        return self.evidence / run_id / scenario / safe_name(model) / name

    def claim_evidence_folder(
        self, run_id: str, scenario: str, model: str, rep: int, attempt: int = 1
    ) -> Path:
        """Create an attempt's evidence folder, or refuse when it exists: no two reps (or
        attempts) ever share one."""
        folder = self.evidence_folder(run_id, scenario, model, rep, attempt)
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            folder.mkdir()
        except FileExistsError:
            raise ConfigError(
                f"{folder}: this rep's evidence folder already exists; another process "
                "recorded (or is recording) the same rep"
            ) from None
        return folder

    def set_aside(self, run_id: str, scenario: str, model: str, rep: int) -> list[Path]:
        """Move an unrecorded rep's evidence folders (every attempt's) out of the way: a
        process claimed them and died before recording. Only a grid holding the lock does
        this, and only for folders no manifest line names."""
        first = self.evidence_folder(run_id, scenario, model, rep)
        named = (
            {self.path(x.evidence).resolve() for x in self.read_evidence_index().items}
            if self.has_evidence_index()
            else set()
        )
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        moved = []
        for folder in [first, *sorted(first.parent.glob(f"{first.name}.attempt-*"))]:
            if ".abandoned-" in folder.name or not folder.is_dir():
                continue
            if folder.resolve() in named:
                continue
            aside = folder.with_name(f"{folder.name}.abandoned-{stamp}")
            folder.rename(aside)
            moved.append(aside)
        return moved

    @contextmanager
    def hold_grid(self, command: str, notes: list[str] | None = None) -> Iterator[None]:
        """Own the folder for one grid: a second grid is refused, naming this one."""
        with hold_grid_lock(self.grid_lock, command, notes):
            yield

    # ------------------------------------------------------------------ reading

    def exists(self) -> bool:
        return self.root.is_dir()

    def read_plans(self) -> Read[Plan]:
        """Every plan; a line that does not read is named and skipped."""
        return _read_jsonl(self.plans, Plan, "plan")

    def has_evidence_index(self) -> bool:
        check_record(self.evidence_index)
        return self.evidence_index.is_file()

    def read_evidence_index(self, data: bytes | None = None) -> Read[EvidenceLine]:
        """Every manifest line; a line that does not read is named and skipped. From `data`
        when the caller has read the manifest's bytes already."""
        if data is None and not self.evidence_index.is_file():
            raise NotFoundError(
                f"{self.evidence_index}: no manifest; nothing was run into this folder"
            )
        return _read_jsonl(
            self.evidence_index, EvidenceLine, "manifest", _shared_declarations(), data
        )

    def read_manifest_summaries(self) -> Read[ManifestSummary]:
        """Every manifest line as `report` reads it (no kept files' names or hashes), and one
        problem per line that does not read, as `read_evidence_index` names them."""
        check_record(self.evidence_index)
        if not self.evidence_index.is_file():
            raise NotFoundError(
                f"{self.evidence_index}: no manifest; nothing was run into this folder"
            )
        items, problems = read_summaries(self.evidence_index)
        return Read(items, problems)

    def results_files(
        self, plans: Iterable[Plan], lines: Iterable[ManifestFacts] = ()
    ) -> list[Path]:
        """Every results file the folder's records name, the default one first."""
        files: dict[Path, None] = {self.results.resolve(): None}
        names = [p.results for p in plans] + [x.results for x in lines]
        for name in dict.fromkeys(name or RESULTS for name in names):
            files.setdefault(self.path(name).resolve(), None)
        return list(files)

    def record_hashes(
        self, plans: Iterable[Plan], lines: Iterable[ManifestFacts]
    ) -> dict[str, str]:
        """The records a verdict on this folder is drawn from, by hash: plans, manifest and
        each results file by content (`absent` when missing); the evidence and kept subjects
        by a listing of every file's path, size and modification time, so an edited or
        added file changes it without every transcript being read again."""
        files = [self.plans, self.evidence_index, *self.results_files(plans, lines)]
        found = {self.relative(path): _content_hash(path) for path in files}
        listing = hashlib.sha256()
        for folder in (EVIDENCE, SUBJECTS):
            _list_files(listing, str(self.root / folder), f"{folder}/")
        found[f"{EVIDENCE}/ + {SUBJECTS}/"] = "listing:" + listing.hexdigest()
        return found

    def read_verification(self) -> VerificationRecord | None:
        """The record verify left, or None when there is none; ValueError when it does not
        read."""
        check_record(self.verification)
        if not self.verification.is_file():
            return None
        return VerificationRecord.model_validate_json(self.verification.read_bytes())

    def write_verification(self, record: VerificationRecord) -> None:
        """Replace the record whole, so a reader never sees half of one."""
        check_record(self.verification)
        partial = self.verification.with_name(f".{VERIFIED}.{os.getpid()}.partial")
        partial.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(partial, self.verification)

    def recorded_suites(
        self, plans: Iterable[Plan] | None = None, lines: Iterable[ManifestFacts] | None = None
    ) -> set[str]:
        """The suites whose reps this folder holds, by its plans and manifest lines (read
        here unless the caller has read them already)."""
        if plans is None:
            plans = self.read_plans().items
        if lines is None:
            lines = self.read_manifest_summaries().items if self.evidence_index.is_file() else []
        suites = {p.suite for p in plans if p.suite}
        suites |= {str(x.declarations.get("suite")) for x in lines if x.declarations.get("suite")}
        return suites

    # ------------------------------------------------------------------ writing

    def check_writable(self) -> None:
        """Refuse, before anything is planned, a folder that cannot hold records."""
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"{self.root}: the results folder is a file, not a folder")
        for path in (self.plans, self.evidence_index):
            check_appendable(path)

    def check_records(self) -> None:
        """Refuse the folder when one of its records is not a regular file (a FIFO, a link):
        before anything reads or writes it."""
        for path in (self.plans, self.evidence_index, self.verification, self.grid_lock,
                     self.results):  # fmt: skip
            check_record(path)

    def append_plan(self, plan: Plan) -> None:
        append_locked(self.plans, (plan.model_dump_json() + "\n").encode())

    def append_evidence_line(self, line: EvidenceLine) -> None:
        append_locked(self.evidence_index, (line.model_dump_json() + "\n").encode())


def _shared_declarations() -> Callable[[EvidenceLine], EvidenceLine]:
    """Lines that declare the same things (every rep of one bundle) are given one dict as
    they are read, compared by content: held apart, declarations are most of a line's memory
    (16 KB a line against 2.5 KB shared, at 10,000 reps). So are lines that name the same kept
    files (every rep keeps its files under the same names). Nothing changes a read line's
    declarations or file names. A line is first held against the text of the declarations
    last shared under its bundle id (`repr`, which tells 1 from 1.0 and True), and keyed by
    its sorted JSON only when they differ: that key costs more than the parse of the line."""
    shared: dict[str, dict[str, Any]] = {}
    by_bundle: dict[str, tuple[str, dict[str, Any]]] = {}
    names: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}

    def keep(line: EvidenceLine) -> EvidenceLine:
        text = repr(line.declarations)
        known = by_bundle.get(line.bundle_id)
        if known is None or known[0] != text:
            key = json.dumps(line.declarations, sort_keys=True, default=str)
            known = by_bundle[line.bundle_id] = (
                text,
                shared.setdefault(key, line.declarations),
            )
        line.declarations = known[1]
        line.files = names.setdefault(tuple(line.files.items()), line.files)
        return line

    return keep


_name = attrgetter("name")


def _list_files(listing: Any, path: str, rel: str) -> None:
    """`rel/name NUL size NUL mtime_ns` for each file under `path`: a folder's files (sorted)
    before its subfolders (sorted), links listed and never followed. One stat per file, the
    floor of a listing: a 100,000-rep folder holds about 700,000 files."""
    try:
        with os.scandir(path) as found:
            entries = list(found)
    except (FileNotFoundError, NotADirectoryError):
        return
    folders: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        (folders if entry.is_dir() else files).append(entry)
    folders.sort(key=_name)
    files.sort(key=_name)
    lines = []
    for entry in files:
        info = entry.stat(follow_symlinks=False)
        lines.append(f"{rel}{entry.name}\0{info.st_size}\0{info.st_mtime_ns}\n")
    listing.update("".join(lines).encode())
    for entry in folders:
        if not entry.is_symlink():
            _list_files(listing, entry.path, f"{rel}{entry.name}/")


def _content_hash(path: Path) -> str:
    check_record(path)
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return "absent"


def evidence_key(line: ManifestFacts) -> RepKey:
    return (line.run_id, line.scenario, line.model, line.rep)

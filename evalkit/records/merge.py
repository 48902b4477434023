"""`evalkit merge OUT DIR…`: the shards of one grid, gathered into one verifiable folder.

Rows, manifest lines, plans and evidence are copied byte for byte and only appended: a row is
never rewritten. Shards of different grids (digest) or instruments (frozen hashes) are
refused, and so is a cell that two sources both hold, so a shard merged twice cannot double
an n. What is missing (shards never merged, planned reps never recorded) is named.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import NotFoundError, RefusedError
from evalkit.models import EvidenceLine, Plan
from evalkit.records.appendlog import append_locked
from evalkit.records.results import HEADER
from evalkit.records.verify import FROZEN_KEYS
from evalkit.records.workdir import PLANS, RESULTS, Workdir


@dataclass
class Source:
    folder: Path
    plans: list[Plan]
    lines: list[EvidenceLine]
    rows: list[str]

    @property
    def shards(self) -> set[tuple[str, str]]:
        return {(p.grid_digest, p.shard) for p in self.plans if p.shard}


@dataclass
class MergeResult:
    digest: str
    shards: list[str]
    rows: int
    lines: int
    missing_shards: list[str] = field(default_factory=list)
    missing_reps: list[str] = field(default_factory=list)


def _read(folder: Path) -> Source:
    records = Workdir(folder)
    folder = records.root
    if not records.plans.is_file():
        raise NotFoundError(f"{folder}: no {PLANS}; not a results folder")
    read_plans = records.read_plans()
    read_lines = records.read_evidence_index() if records.has_evidence_index() else None
    bad = read_plans.problems + (read_lines.problems if read_lines else [])
    if bad:
        raise RefusedError(f"{folder}/{bad[0]}; merge copies whole folders only")
    plans = read_plans.items
    lines = read_lines.items if read_lines else []
    rows: list[str] = []
    for name in sorted({p.results or RESULTS for p in plans}):
        path = folder / name
        if name != RESULTS:
            raise RefusedError(f"{folder}: rows in {name}; merge reads shards written to {RESULTS}")
        if path.is_file():
            text = path.read_text(encoding="utf-8").splitlines(keepends=True)
            if text and text[0] != HEADER:
                raise RefusedError(
                    f"{path}:1: its columns differ from this evalkit's; merge it with the "
                    "evalkit that wrote it"
                )
            rows += [r for r in text[1:] if r.strip()]
    return Source(folder, plans, lines, rows)


def _identity(source: Source) -> str:
    digests = {p.grid_digest for p in source.plans}
    if len(digests) != 1 or "" in digests:
        raise RefusedError(
            f"{source.folder}: not one shard of a sharded grid (plans carry "
            f"{', '.join(sorted(d or 'no grid digest' for d in digests))}); run it with "
            "`evalkit grid --shard I/N`"
        )
    return digests.pop()


def refuse_calibration(sources: list[Source]) -> None:
    """Rows `calibrate` recorded are reference policies proving the instrument: they never
    join a measurement, whichever side of a merge they are on."""
    for source in sources:
        if any(p.calibration for p in source.plans):
            raise RefusedError(
                f"{source.folder}: a calibration folder (written by `evalkit calibrate`); its "
                "rows prove the instrument and are never merged into a measurement"
            )


def _frozen(lines: list[EvidenceLine]) -> set[str]:
    return {
        json.dumps({k: x.declarations.get(k) for k in FROZEN_KEYS}, sort_keys=True) for x in lines
    }


def _cells(source: Source) -> Counter[tuple[str, str, str, int]]:
    return Counter(
        (p.run_id, c.scenario, c.model, rep) for p in source.plans for c in p.cells
        for rep in c.numbers()
    )  # fmt: skip


def merge(out: Path, folders: list[Path]) -> MergeResult:
    """Append every source's plans, manifest lines, rows and evidence to OUT (which may
    already hold earlier shards of the same grid), after checking they belong together."""
    out = out.resolve()
    existing = [_read(out)] if Workdir(out).plans.is_file() else []
    sources = [_read(folder) for folder in folders]
    everything = existing + sources
    refuse_calibration(everything)
    digests = {s.folder: _identity(s) for s in everything}
    first = everything[0]
    for source in everything[1:]:
        if digests[source.folder] != digests[first.folder]:
            raise RefusedError(
                f"{source.folder}: a shard of grid {digests[source.folder]}, not of "
                f"{digests[first.folder]} ({first.folder}): different cells, instrument or "
                "settings"
            )
    frozen = _frozen([x for s in everything for x in s.lines])
    if len(frozen) > 1:
        raise RefusedError(
            f"the shards were run against {len(frozen)} different sets of frozen hashes "
            "(fixtures, plugins, rubric, checker or CLI version); they are not one measurement"
        )
    seen: dict[tuple[str, str, str, int], Path] = {}
    for source in everything:
        for cell in _cells(source):
            if cell in seen:
                run_id, scenario, model, rep = cell
                raise RefusedError(
                    f"{source.folder}: {scenario} {model} rep {rep} (run {run_id}) is already "
                    f"in {seen[cell]}; a shard merged twice would double its n"
                )
            seen[cell] = source.folder
    for source in sources:
        for line in source.lines:
            target = out / line.evidence
            if target.exists():
                raise RefusedError(f"{target}: evidence already there; refusing to overwrite it")
    for source in sources:
        _copy(source, out)
    return _summary(out, digests[first.folder], everything)


def _copy(source: Source, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for line in source.lines:
        shutil.copytree(source.folder / line.evidence, out / line.evidence)
    records = Workdir(out)
    for plan in source.plans:
        records.append_plan(plan)
    for line in source.lines:
        records.append_evidence_line(line)
    if source.rows:
        append_locked(records.results, "".join(source.rows).encode(), HEADER.encode())


def _summary(out: Path, digest: str, everything: list[Source]) -> MergeResult:
    plans = [p for s in everything for p in s.plans]
    lines = [x for s in everything for x in s.lines]
    counts = {int(p.shard.split("/")[1]) for p in plans if p.shard}
    present = {int(p.shard.split("/")[0]) for p in plans if p.shard}
    count = max(counts) if counts else 0
    recorded = {(x.run_id, x.scenario, x.model, x.rep) for x in lines}
    missing = sorted(
        f"{run_id} {scenario} {model} rep {rep}"
        for s in everything
        for (run_id, scenario, model, rep) in _cells(s)
        if (run_id, scenario, model, rep) not in recorded
    )
    return MergeResult(
        digest=digest,
        shards=sorted({p.shard for p in plans if p.shard}, key=lambda x: int(x.split("/")[0])),
        rows=sum(len(s.rows) for s in everything),
        lines=len(lines),
        missing_shards=[f"{i}/{count}" for i in range(1, count + 1) if i not in present],
        missing_reps=missing,
    )

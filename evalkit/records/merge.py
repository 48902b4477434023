"""`evalkit merge OUT DIR…`: the shards of one grid, gathered into one verifiable folder.

Rows, manifest lines, plans and evidence are copied byte for byte and only appended: a row is
never rewritten. Shards of different grids (digest) or instruments (frozen hashes), or cut
with different N, are refused, and so is a rep that two sources (or two run ids) both hold: a
rep of a grid is named by its cell, not by the run id, so a shard merged twice cannot double
an n. What is missing (shards never merged, planned reps never recorded) is named. A merge is
all or nothing: every source is checked whole before the first write, evidence is staged in a
hidden folder inside OUT, and the records are appended last.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import NotFoundError, RefusedError
from evalkit.models import EvidenceLine, Plan
from evalkit.records.appendlog import append_locked
from evalkit.records.confined import Confinement, OutsideFolderError
from evalkit.records.keep import carry_folder
from evalkit.records.results import HEADER
from evalkit.records.verify_verdict import FROZEN_KEYS
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


RepCell = tuple[str, str, str, int]
"""scenario, model, variant, rep: what names a rep of one grid, whatever run id it ran under."""


def _cells(source: Source) -> list[tuple[RepCell, str]]:
    return [
        ((c.scenario, c.model, c.variant, rep), p.run_id)
        for p in source.plans for c in p.cells for rep in c.numbers()
    ]  # fmt: skip


def _one_n(everything: list[Source]) -> None:
    where: dict[str, Path] = {}
    for source in everything:
        for plan in source.plans:
            where.setdefault(plan.shard, source.folder)
    counts = {label.partition("/")[2] for label in where}
    if len(counts) > 1:
        shown = ", ".join(f"{label} ({folder})" for label, folder in sorted(where.items()))
        raise RefusedError(
            f"shards cut with different N ({shown}): they are not slices of one grid; "
            "merge the shards of one --shard I/N only"
        )


def _once(everything: list[Source]) -> None:
    """Every rep of the grid in at most one source, under one run id, whatever it is (a
    folder named twice is two sources)."""
    seen: dict[RepCell, tuple[int, str]] = {}
    shards: dict[str, int] = {}
    for index, source in enumerate(everything):
        for label in sorted({p.shard for p in source.plans}):
            if shards.setdefault(label, index) != index:
                raise RefusedError(
                    f"{source.folder}: shard {label} is already in "
                    f"{everything[shards[label]].folder}; a shard merged twice would double "
                    "its n"
                )
        for cell, run_id in _cells(source):
            if seen.setdefault(cell, (index, run_id)) != (index, run_id):
                scenario, model, _, rep = cell
                first, first_run = seen[cell]
                raise RefusedError(
                    f"{source.folder}: {scenario} {model} rep {rep} (run {run_id}) is already "
                    f"in {everything[first].folder} (run {first_run}); a shard merged twice "
                    "would double its n"
                )


def _check_evidence(source: Source, out: Confinement) -> list[Path]:
    """Every evidence folder the source's manifest names: inside the source, holding each file
    its line names and no link, and free inside OUT. Returns where each goes in OUT."""
    within = Confinement(source.folder)
    targets = []
    for line in source.lines:
        name = f"{source.folder}: {line.run_id} {line.scenario} {line.model} rep {line.rep}"
        try:
            folder = within.evidence_folder(line)
            files = within.evidence_files(line)
            target = out(line.evidence)
        except OutsideFolderError as exc:
            raise RefusedError(f"{name}: {exc}") from None
        if not folder.is_dir():
            raise RefusedError(f"{name}: its evidence folder {line.evidence} is missing")
        try:
            kept = _plain_files(str(folder))
        except _LinkFound as link:
            raise RefusedError(
                f"{name}: its evidence holds a link ({link}); evalkit keeps none"
            ) from None
        for role, path in sorted(files.items()):
            if str(path) not in kept and not path.is_file():
                raise RefusedError(f"{name}: its kept {role} file is missing")
        if os.path.lexists(target):
            raise RefusedError(f"{target}: evidence already there; refusing to overwrite it")
        targets.append(target)
    return targets


class _LinkFound(Exception):
    """An evidence folder holds a link (its name is the message)."""


def _plain_files(folder: str) -> set[str]:
    """Every file under folder by path, read from the folder listings alone (no stat per
    file); _LinkFound at the first link."""
    found: set[str] = set()
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise _LinkFound(entry.name)
            if entry.is_dir(follow_symlinks=False):
                found |= _plain_files(entry.path)
            else:
                found.add(entry.path)
    return found


def merge(out: Path, folders: list[Path]) -> MergeResult:
    """Append every source's plans, manifest lines, rows and evidence to OUT (which may
    already hold earlier shards of the same grid), after checking they belong together.
    All or nothing: every source is checked whole before the first write, the evidence is
    staged in a hidden folder inside OUT, and the records are appended last; a refusal or a
    failure leaves OUT as it was."""
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
    _one_n(everything)
    frozen = _frozen([x for s in everything for x in s.lines])
    if len(frozen) > 1:
        raise RefusedError(
            f"the shards were run against {len(frozen)} different sets of frozen hashes "
            "(fixtures, plugins, rubric, checker or CLI version); they are not one measurement"
        )
    _once(everything)
    named: dict[Path, Path] = {}
    within_out = Confinement(out)
    for source in sources:
        for line, target in zip(source.lines, _check_evidence(source, within_out), strict=True):
            if target in named:
                raise RefusedError(
                    f"{source.folder}: evidence {line.evidence} is named twice (also by "
                    f"{named[target]}); refusing to merge one folder over another"
                )
            named[target] = source.folder
    _write(out, sources)
    return _summary(out, digests[first.folder], everything)


def _write(out: Path, sources: list[Source]) -> None:
    """Stage every evidence folder inside OUT, move them into place, then append the records;
    on any failure undo what was done (OUT made for this merge is removed again)."""
    made = next((p for p in [*reversed(out.parents), out] if not p.exists()), None)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".merging-", dir=out))
    placed: list[tuple[Path, Path]] = []
    made_dirs: list[Path] = []
    records = Workdir(out)
    sizes = {
        path: path.stat().st_size if path.is_file() else None
        for path in (records.plans, records.evidence_index, records.results)
    }
    present: set[Path] = set()
    try:
        for source in sources:
            within = Confinement(source.folder)
            for line in source.lines:
                carry_folder(within.evidence_folder(line), staging / line.evidence)
        for source in sources:
            for line in source.lines:
                target = out / line.evidence
                if target.parent not in present:
                    missing = [p for p in reversed(target.parents) if p.is_relative_to(out)]
                    made_dirs += [p for p in missing if p not in present and not p.exists()]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    present.update(missing)
                os.rename(staging / line.evidence, target)
                placed.append((staging / line.evidence, target))
        _append(records, sources)
    except BaseException:
        for path, size in sizes.items():
            if size is None:
                path.unlink(missing_ok=True)
            elif path.is_file():
                os.truncate(path, size)
        for staged, target in reversed(placed):
            os.rename(target, staged)
        for folder in reversed(made_dirs):
            with contextlib.suppress(OSError):
                folder.rmdir()
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _append(records: Workdir, sources: list[Source]) -> None:
    """Plans, then manifest lines, then rows, each appended a source at a time: one write
    for all of a 100,000-rep grid's manifest would hold it twice over in memory."""
    plans = "".join(p.model_dump_json() + "\n" for s in sources for p in s.plans)
    append_locked(records.plans, plans.encode())
    for source in sources:
        if source.lines:
            lines = "".join(x.model_dump_json() + "\n" for x in source.lines)
            append_locked(records.evidence_index, lines.encode())
    for source in sources:
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
        for (scenario, model, _, rep), run_id in dict(_cells(s)).items()
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

"""`evalkit merge OUT DIR…`: the shards of one grid, gathered into one verifiable folder.

Rows, manifest lines, plans and evidence are copied byte for byte and only appended: a row is
never rewritten. Shards of different grids (digest) or instruments (frozen hashes), or cut
with different N, are refused, and so is a rep that two sources (or two run ids) both hold: a
rep of a grid is named by its cell, not by the run id, so a shard merged twice cannot double
an n. What is missing (shards never merged, planned reps never recorded) is named. A merge is
all or nothing: every source is checked whole before the first write, evidence is linked
straight into place with each folder it made remembered (and removed again on a failure), and
the records are appended last. Manifest lines are appended as the text that was read and
checked, not serialised again.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import NotFoundError, RefusedError
from evalkit.models import EvidenceLine, Plan
from evalkit.records.folder.appendlog import append_locked
from evalkit.records.folder.confined import Confinement, OutsideFolderError
from evalkit.records.folder.jsonl import json_lines
from evalkit.records.folder.keep import carry_file, carry_folder
from evalkit.records.folder.results import HEADER
from evalkit.records.folder.workdir import PLANS, RESULTS, Workdir
from evalkit.records.verify.verdict import FROZEN_KEYS


@dataclass
class Source:
    folder: Path
    plans: list[Plan]
    lines: list[EvidenceLine]
    rows: list[str]
    manifest_hash: str = ""
    """sha256 of the manifest's bytes as read and checked: appended only while they match"""

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
    records.check_records()
    if not records.plans.is_file():
        raise NotFoundError(f"{folder}: no {PLANS}; not a results folder")
    read_plans = records.read_plans()
    data = records.evidence_index.read_bytes() if records.has_evidence_index() else None
    read_lines = records.read_evidence_index(data) if data is not None else None
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
    return Source(folder, plans, lines, rows, hashlib.sha256(data or b"").hexdigest())


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
    """Each set of frozen hashes the lines declare (lines of one bundle share one dict, so
    each dict is looked at once)."""
    unique = {id(x.declarations): x.declarations for x in lines}
    return {json.dumps({k: d.get(k) for k in FROZEN_KEYS}, sort_keys=True) for d in unique.values()}


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


Carried = tuple[str, str, tuple[str, ...] | None]
"""An evidence folder, where it goes in OUT, and the names of its files when it holds no
folder (as listed when it was checked), else None."""


def _check_evidence(source: Source, out: Confinement) -> list[Carried]:
    """Every evidence folder the source's manifest names: inside the source, holding each file
    its line names and no link, and free inside OUT. Returns each folder with where it goes in
    OUT and, for a folder holding files only, their names, so it is linked from the listing
    that was checked. A kept file named plainly (no folder, no `..`) is found in that listing,
    which shows it is a file and no link: no stat per file."""
    within = Confinement(source.folder)
    carried: list[Carried] = []
    names: dict[tuple[str, ...], tuple[str, ...]] = {}
    for line in source.lines:
        name = f"{source.folder}: {line.run_id} {line.scenario} {line.model} rep {line.rep}"
        try:
            folder = within.evidence_folder(line)
            target = out(line.evidence)
        except OutsideFolderError as exc:
            raise RefusedError(f"{name}: {exc}") from None
        try:
            kept = _plain_files(str(folder))
        except (FileNotFoundError, NotADirectoryError):
            raise RefusedError(f"{name}: its evidence folder {line.evidence} is missing") from None
        except _LinkFound as link:
            try:  # a kept file that leads out is named as such, before any other link
                within.evidence_files(line)
            except OutsideFolderError as exc:
                raise RefusedError(f"{name}: {exc}") from None
            raise RefusedError(
                f"{name}: its evidence holds a link ({link}); evalkit keeps none"
            ) from None
        for role, rel in sorted(line.files.items()):
            if f"{folder}/{rel}" in kept and "/" not in rel and rel not in (".", ".."):
                continue
            try:
                path = within(line.evidence, rel)
            except OutsideFolderError as exc:
                raise RefusedError(f"{name}: {exc}") from None
            if str(path) not in kept and not path.is_file():
                raise RefusedError(f"{name}: its kept {role} file is missing")
        if os.path.lexists(target):
            raise RefusedError(f"{target}: evidence already there; refusing to overwrite it")
        prefix = f"{folder}/"
        flat = tuple(sorted(p[len(prefix) :] for p in kept))
        if all("/" not in rel for rel in flat):
            carried.append((str(folder), str(target), names.setdefault(flat, flat)))
        else:
            carried.append((str(folder), str(target), None))
    return carried


class _LinkFound(Exception):
    """An evidence folder holds a link (its name is the message)."""


def _plain_files(folder: str) -> set[str]:
    """Every file under folder by path, and every folder by its path and a slash, read from
    the folder listings alone (no stat per file); _LinkFound at the first link."""
    found: set[str] = set()
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise _LinkFound(entry.name)
            if entry.is_dir(follow_symlinks=False):
                found.add(f"{entry.path}/")
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
    named: dict[str, Path] = {}
    carried: list[Carried] = []
    within_out = Confinement(out)
    for source in sources:
        for line, carry in zip(source.lines, _check_evidence(source, within_out), strict=True):
            target = carry[1]
            if target in named:
                raise RefusedError(
                    f"{source.folder}: evidence {line.evidence} is named twice (also by "
                    f"{named[target]}); refusing to merge one folder over another"
                )
            named[target] = source.folder
            carried.append(carry)
    _write(out, sources, carried)
    return _summary(out, digests[first.folder], everything)


def _write(out: Path, sources: list[Source], carried: list[Carried]) -> None:
    """Link every evidence folder straight into place, then append the records; on any
    failure undo what was done (each folder this merge made is removed again, and OUT when
    it was made for this merge)."""
    made = next((p for p in [*reversed(out.parents), out] if not p.exists()), None)
    out.mkdir(parents=True, exist_ok=True)
    placed: list[str] = []
    made_dirs: list[str] = []
    records = Workdir(out)
    sizes = {
        path: path.stat().st_size if path.is_file() else None
        for path in (records.plans, records.evidence_index, records.results)
    }
    present: set[str] = {str(out)}
    try:
        for folder, target, files in carried:
            parent = os.path.dirname(target)
            if parent not in present:
                missing = []
                while parent not in present and not os.path.isdir(parent):
                    missing.append(parent)
                    parent = os.path.dirname(parent)
                for step in reversed(missing):
                    os.mkdir(step)
                    made_dirs.append(step)
                present.update(missing)
                present.add(parent)
            os.mkdir(target)  # refused if anything took the place since it was checked
            placed.append(target)
            if files is None:
                carry_folder(folder, target)
            else:
                for name in files:
                    carry_file(f"{folder}/{name}", f"{target}/{name}")
        _append(records, sources)
    except BaseException:
        for path, size in sizes.items():
            if size is None:
                path.unlink(missing_ok=True)
            elif path.is_file():
                os.truncate(path, size)
        for target in reversed(placed):
            shutil.rmtree(target, ignore_errors=True)
        for step in reversed(made_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(step)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise


def _append(records: Workdir, sources: list[Source]) -> None:
    """Plans, then manifest lines, then rows, each appended a source at a time: one write
    for all of a 100,000-rep grid's manifest would hold it twice over in memory."""
    plans = "".join(p.model_dump_json() + "\n" for s in sources for p in s.plans)
    append_locked(records.plans, plans.encode())
    for source in sources:
        if source.lines:
            append_locked(records.evidence_index, _checked_lines(source))
    for source in sources:
        if source.rows:
            append_locked(records.results, "".join(source.rows).encode(), HEADER.encode())


def _checked_lines(source: Source) -> bytes:
    """The source's manifest lines as the text that was read and checked (blank lines left
    out, each ending in one newline); refused when the file changed since."""
    path = Workdir(source.folder).evidence_index
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != source.manifest_hash:
        raise RefusedError(f"{path}: changed while it was being merged; merge again")
    lines = (text for text in json_lines(io.BytesIO(data)) if text.strip())
    return "".join(text + "\n" for text in lines).encode()


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

"""`evalkit results migrate`: rewrite a folder's results files with the current columns.

A file written by an older evalkit reads by header name, but rows are appended only
under a header that has every column telling measurements apart. Migration writes the
current header, fills each absent column with the default `ResultRow` states for it,
keeps every line that does not read as it was (so `verify` still names it), and keeps
the old file as a backup. It then reads the new file back and holds every row against
the old one, column by column; on any difference the old file is put back.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from evalkit.errors import ConfigError, NotFoundError
from evalkit.outpaths import blocking_file, cannot_write
from evalkit.records.folder.regular import check_record
from evalkit.records.folder.results import (
    COLUMNS,
    HEADER,
    RENAMED,
    absent_defaults,
    format_row,
    read_results,
)
from evalkit.records.folder.workdir import Workdir


@dataclass
class Migrated:
    path: Path
    rows: int = 0
    added: list[str] = field(default_factory=list)
    kept_lines: int = 0
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.backup is not None


def _rewrite(path: Path, text: str) -> tuple[list[str], int, int, str]:
    """The migrated text of one results file: (added columns, rows, kept bad lines, text).
    `text` is decoded with surrogateescape, so a kept line goes back byte for byte, ending
    and all; its lines are split as `read_results` splits them, so row numbers agree."""
    lines = text.splitlines(keepends=True)
    header = [RENAMED.get(c, c) for c in lines[0].rstrip("\r\n").split("\t")]
    read = read_results(path)
    if read.problems and read.problems[0].endswith("not an evalkit results file header"):
        raise ConfigError(f"{path}: not an evalkit results file; nothing to migrate")
    by_line = dict(read.rows)
    out = [HEADER]
    kept = 0
    for number, line in enumerate(lines[1:], start=2):
        if number in by_line:
            out.append(format_row(by_line[number]))
        elif line.strip():
            out.append(line if line.splitlines()[0] != line else line + "\n")
            kept += 1
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise ConfigError(
            f"{path}: has columns this evalkit does not know ({', '.join(unknown)}); "
            "migrating would drop them, so the file is left as it is"
        )
    added = [c for c in COLUMNS if c not in header]
    return added, len(by_line), kept, "".join(out)


def _check(old_path: Path, new_path: Path, added: list[str]) -> None:
    """Every row reads back with the same value in every column it had, and the stated
    default in each column it lacked."""
    old = read_results(old_path)
    new = read_results(new_path)
    if len(old.rows) != len(new.rows):
        raise ConfigError(f"{new_path}: {len(old.rows)} rows before migration, {len(new.rows)}")
    defaults = absent_defaults()
    shared = [c for c in COLUMNS if c in old.header]
    for (_, before), (number, after) in zip(old.rows, new.rows, strict=True):
        for column in shared:
            if getattr(before, column) != getattr(after, column):
                raise ConfigError(f"{new_path}:{number}: {column} changed in migration")
        for column in added:
            if getattr(after, column) != defaults[column]:
                raise ConfigError(f"{new_path}:{number}: {column} is not its stated default")


def migrate_file(path: Path, stamp: str) -> Migrated:
    done = Migrated(path)
    check_record(path)
    if not path.is_file() or path.stat().st_size == 0:
        return done
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the lock every append takes: no row lands meanwhile
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        if text.split("\n", 1)[0].rstrip("\r").split("\t") == COLUMNS:
            return done
        added, rows, kept, new = _rewrite(path, text)
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        shutil.copy2(path, backup)
        os.ftruncate(fd, 0)
        os.pwrite(fd, new.encode("utf-8", "surrogateescape"), 0)
        try:
            _check(backup, path, added)
        except ConfigError:
            os.ftruncate(fd, 0)
            os.pwrite(fd, backup.read_bytes(), 0)
            raise
        done.rows, done.added, done.kept_lines = rows, added, kept
        done.backup = backup
        return done
    finally:
        os.close(fd)


def migrate_workdir(records: Workdir) -> list[Migrated]:
    """Migrate every results file the folder's records name, holding the folder's grid lock
    so no grid appends under the old header meanwhile."""
    root = records.root
    blocker = blocking_file(root)
    if blocker is not None:
        raise ConfigError(f"{root}: {blocker} is a file, not a folder")
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{root}: a file, not a results folder")
    if not root.is_dir():
        raise NotFoundError(f"{root}: no such results folder; nothing to migrate")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    try:
        with records.hold_grid("migrate"):
            plans = records.read_plans().items
            lines = records.read_evidence_index().items if records.has_evidence_index() else []
            return [migrate_file(path, stamp) for path in records.results_files(plans, lines)]
    except OSError as exc:
        where = Path(exc.filename) if isinstance(exc.filename, str) else root
        raise cannot_write(where, exc) from None

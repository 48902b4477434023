"""What changed in a sandbox folder against its pristine fixture, by content, never by mtime."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.scoring.fixturefiles import walk_files
from evalkit.scoring.safefile import Unreadable, read_capped


@dataclass
class FolderChanges:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def written(self) -> list[str]:
        """Paths that exist now and differ from the fixture: notes someone wrote."""
        return sorted(self.added + self.changed)

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.deleted)


@dataclass(frozen=True)
class FileBytes:
    """One file of a folder read into memory: a link's target, or a file's bytes."""

    link: bool
    data: bytes


FolderFiles = dict[str, FileBytes]
"""A folder's files (as ``walk_files`` names them) by relative path, read once: a fixture
every rep of a command is compared with."""


def read_files(root: Path) -> FolderFiles:
    files: FolderFiles = {}
    if not root.is_dir():
        return files
    for rel, path in walk_files(root):
        if os.path.islink(path):
            files[rel] = FileBytes(True, os.fsencode(os.readlink(path)))
        else:
            with open(path, "rb") as handle:
                files[rel] = FileBytes(False, handle.read())
    return files


def _same(path: str, before: FileBytes) -> bool:
    """Two links with one target, or two files with the same bytes."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or before.link:
        return (
            stat.S_ISLNK(info.st_mode)
            and before.link
            and os.fsencode(os.readlink(path)) == before.data
        )
    if not stat.S_ISREG(info.st_mode) or info.st_size != len(before.data):
        return False  # a pipe or device in place of a file is a change, and is never read
    try:
        return read_capped(path, len(before.data) + 1) == before.data
    except Unreadable:
        return False


def _files(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    return dict(walk_files(root))


def compare(
    fixture: Path | FolderFiles, current: Path, excluded: tuple[str, ...] = ()
) -> FolderChanges:
    """What changed in current against the fixture (a folder, or its files read already)."""

    def kept(rel: str) -> bool:
        return not any(
            rel == e.rstrip("/") or rel.startswith(e.rstrip("/") + "/") for e in excluded
        )

    before = read_files(fixture) if isinstance(fixture, Path) else fixture
    after = _files(current)
    out = FolderChanges()
    for rel in sorted(after):
        if not kept(rel):
            continue
        if rel not in before:
            out.added.append(rel)
        elif not _same(after[rel], before[rel]):
            out.changed.append(rel)
    out.deleted = [rel for rel in sorted(before) if rel not in after and kept(rel)]
    return out


def links_into(root: Path, target: Path) -> list[str]:
    """Paths under root that are symlinks resolving at or under target. A folder named .git
    is not entered (nor a link to one counted); a linked folder is not followed."""
    target = target.expanduser().resolve()
    hits: list[str] = []

    def walk(folder: str, prefix: str) -> None:
        try:
            with os.scandir(folder) as found:
                entries = list(found)
        except OSError:
            return
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if entry.name == ".git" and is_dir:
                continue
            if entry.is_symlink():
                resolved = Path(entry.path).resolve()
                if resolved == target or target in resolved.parents:
                    hits.append(prefix + entry.name)
            elif is_dir:
                walk(entry.path, prefix + entry.name + "/")

    walk(str(root), "")
    return sorted(hits)

"""A folder read once and written out many times.

`verify` rebuilds a sandbox for every kept rep from the same few baselines, and self-test
builds the same scenario sandbox for every case; reading the source tree once and writing
it from memory spares a walk, a stat and a read of every file for every copy. What is read
follows `copy_fixture`: the same names are skipped, symlinks stay links, the executable
bits and modification times are kept.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.scoring.fixturefiles import skipped


@dataclass(frozen=True)
class _Entry:
    rel: str
    kind: str
    """dir, file or link"""
    mode: int
    mtime_ns: int
    data: bytes
    """a file's bytes, or a link's target"""


class FolderImage:
    """The files, folders and links under one folder, held in memory."""

    def __init__(self, entries: list[_Entry]) -> None:
        self._entries = entries

    @classmethod
    def read(cls, root: Path, skip: Callable[[str], bool] = skipped) -> FolderImage:
        """root's tree, less any file or folder whose name `skip` names (by default what
        is never part of a fixture)."""
        entries: list[_Entry] = []

        def walk(folder: str, prefix: str) -> None:
            with os.scandir(folder) as found:
                children = sorted(found, key=lambda e: e.name)
            for child in children:
                if skip(child.name):
                    continue
                rel = prefix + child.name
                info = child.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    target = os.fsencode(os.readlink(child.path))
                    entries.append(_Entry(rel, "link", 0, 0, target))
                elif stat.S_ISDIR(info.st_mode):
                    entries.append(_Entry(rel, "dir", stat.S_IMODE(info.st_mode), 0, b""))
                    walk(child.path, rel + "/")
                else:
                    with open(child.path, "rb") as handle:
                        data = handle.read()
                    mode = stat.S_IMODE(info.st_mode)
                    entries.append(_Entry(rel, "file", mode, info.st_mtime_ns, data))

        walk(str(root), "")
        return cls(entries)

    def write(self, dest: Path) -> None:
        """Lay the tree out at dest, which must not exist yet (its parent must)."""
        base = str(dest)
        os.mkdir(base)
        folders = []
        for entry in self._entries:
            path = os.path.join(base, entry.rel)
            if entry.kind == "dir":
                os.mkdir(path)
                folders.append((path, entry.mode))
            elif entry.kind == "link":
                os.symlink(os.fsdecode(entry.data), path)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    _write_all(fd, entry.data)
                    os.fchmod(fd, entry.mode)
                    os.utime(fd, ns=(entry.mtime_ns, entry.mtime_ns))
                finally:
                    os.close(fd)
        for path, mode in reversed(folders):
            os.chmod(path, mode)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]

"""A folder read once and written out many times.

`verify` rebuilds a sandbox for every kept rep from the same few baselines, and self-test
builds the same scenario sandbox for every case; reading the source tree once and writing
it from memory spares a walk, a stat and a read of every file for every copy. What is read
follows `copy_fixture`: the same names are skipped, symlinks stay links, the executable
bits and modification times are kept.

Creating and deleting files is what costs most on many disks (a journal entry each, a
discard each on some mounts), so a folder used for one case after another is `reset`:
what still matches the image is kept, and only what a case added, changed or removed is
deleted or written again.
"""

from __future__ import annotations

import os
import shutil
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
                folders.append((path, entry.mode))
            _create(path, entry)
        for path, mode in reversed(folders):
            os.chmod(path, mode)

    def reset(self, dest: Path) -> None:
        """Make dest, a folder this image was laid out at before, hold exactly this tree
        again: the same names, kinds, bytes, link targets, modes and file times, and nothing
        else. An entry is kept only when all of those match (a file's bytes are read and
        compared, and a file with another hard link is never kept) or when only a file's time
        differs, which is set back; everything else is removed, and what is missing is
        written. Links are never followed."""
        wanted = {entry.rel: entry for entry in self._entries}
        kept: set[str] = set()
        settled: set[str] = set()  # folders whose mode was right and never opened up

        def walk(folder: str, prefix: str) -> None:
            with os.scandir(folder) as found:
                children = [(child.name, child.path) for child in found]
            for name, path in children:
                rel = prefix + name
                info = os.lstat(path)
                entry = wanted.get(rel)
                if entry is not None and _matches(entry, path, info):
                    kept.add(rel)
                    if entry.kind == "dir":
                        if stat.S_IMODE(info.st_mode) == entry.mode and entry.mode & 0o700 == 0o700:
                            settled.add(rel)
                        walk(path, rel + "/")
                else:
                    _remove(path, info)

        base = str(dest)
        _open_folder(base, os.lstat(base))
        walk(base, "")
        folders = []
        for entry in self._entries:
            path = os.path.join(base, entry.rel)
            if entry.kind == "dir" and entry.rel not in settled:
                folders.append((path, entry.mode))
            if entry.rel not in kept:
                _create(path, entry)
        for path, mode in reversed(folders):
            os.chmod(path, mode)


def _open_folder(path: str, info: os.stat_result) -> None:
    """A folder a case made unreadable or read-only is opened up to be walked; reset
    sets every folder's mode again afterwards."""
    if stat.S_IMODE(info.st_mode) & 0o700 != 0o700:
        os.chmod(path, stat.S_IMODE(info.st_mode) | 0o700)


def _matches(entry: _Entry, path: str, info: os.stat_result) -> bool:
    if entry.kind == "dir":
        if not stat.S_ISDIR(info.st_mode):
            return False
        _open_folder(path, info)
        return True
    if entry.kind == "link":
        return stat.S_ISLNK(info.st_mode) and os.fsencode(os.readlink(path)) == entry.data
    if not (
        stat.S_ISREG(info.st_mode)
        and info.st_nlink == 1
        and info.st_size == len(entry.data)
        and stat.S_IMODE(info.st_mode) == entry.mode
    ):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        if os.read(fd, len(entry.data) + 1) != entry.data:
            return False
        if info.st_mtime_ns != entry.mtime_ns:
            os.utime(fd, ns=(entry.mtime_ns, entry.mtime_ns))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _remove(path: str, info: os.stat_result) -> None:
    """A file, link or whole folder a case left; folders it closed are opened first."""
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    _open_folder(path, info)
    for folder, names, _ in os.walk(path):
        for name in names:
            inner = os.path.join(folder, name)
            found = os.lstat(inner)
            if stat.S_ISDIR(found.st_mode):
                _open_folder(inner, found)
    shutil.rmtree(path)


def _create(path: str, entry: _Entry) -> None:
    """One entry where nothing stands; a folder's mode is set by the caller, after its contents."""
    if entry.kind == "dir":
        os.mkdir(path)
    elif entry.kind == "link":
        os.symlink(os.fsdecode(entry.data), path)
    else:
        _write_file(path, entry)


def _write_file(path: str, entry: _Entry) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_all(fd, entry.data)
        os.fchmod(fd, entry.mode)
        os.utime(fd, ns=(entry.mtime_ns, entry.mtime_ns))
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]

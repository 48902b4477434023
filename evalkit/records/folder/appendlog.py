"""Appending whole lines to a shared file from many processes at once."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.records.folder.regular import check_record


def check_appendable(path: Path) -> None:
    """Refuse, in one line, a file that an append would fail on: a folder in its place, no
    permission to write it, or a parent that cannot be made or written; or a FIFO, link or
    other file that is not regular in its place (`regular.py`)."""
    check_record(path)
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a file that rows can be appended to")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise ConfigError(f"{path}: not writable")
        return
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{path}: cannot be created: {parent} is a file")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{path}: cannot be created: {parent} is not writable")


def append_locked(path: Path, data: bytes, header: bytes = b"") -> None:
    """One exclusive lock, one write: a line is never torn or interleaved with another.

    The header is written first when the file is still empty, under the same lock. A file
    whose last line was torn (no final newline) gets one first, so the fragment stays a line
    of its own that readers name, and the new record is whole.
    """
    check_record(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(path, flags, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if header and size == 0:
            data = header + data
        elif size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)

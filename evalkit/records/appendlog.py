"""Appending whole lines to a shared file from many processes at once."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def append_locked(path: Path, data: bytes, header: bytes = b"") -> None:
    """One exclusive lock, one write: a line is never torn or interleaved with another.

    The header is written first when the file is still empty, under the same lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if header and os.fstat(fd).st_size == 0:
            data = header + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)

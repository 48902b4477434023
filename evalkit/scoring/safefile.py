"""The one reader of a file the agent under test could have written.

Such a file is hostile: a link may lead anywhere, a FIFO blocks whoever opens it, a device
never ends and a file may be huge. So it is read only when it is a regular file, opened
without following a link and without blocking, and never past a cap: anything else is
`Unreadable`, which each caller turns into its own undecided or failed answer.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DEFAULT_CAP = 16 * 1024 * 1024


class Unreadable(Exception):
    """A file that is not a regular file, could not be opened, or is larger than allowed."""


def read_capped(path: Path | str, cap: int = DEFAULT_CAP, whole: bool = False) -> bytes:
    """At most `cap` bytes of a regular file; with `whole`, a longer file is Unreadable
    rather than cut."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise Unreadable("not-a-regular-file")
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable(type(exc).__name__) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable("not-a-regular-file")
        chunks: list[bytes] = []
        left = cap + 1 if whole else cap
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise Unreadable(type(exc).__name__) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if whole and len(data) > cap:
        raise Unreadable("too-large")
    return data


def agent_text(path: Path | str, cap: int = DEFAULT_CAP) -> str:
    """A file's text, at most `cap` bytes of it, undecodable bytes replaced; '' for one that
    is no regular file or cannot be read (a FIFO, a link, a device): it says nothing."""
    try:
        return read_capped(path, cap).decode("utf-8", "replace")
    except Unreadable:
        return ""

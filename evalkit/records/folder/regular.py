"""A results folder's records are regular files, or they are refused in one line.

A FIFO in place of `results.tsv` would swallow every row appended to it and block every
reader; a link would send the records somewhere else; a device or socket is not a record at
all. Every reader and writer of a records file (results files, plans, manifest, verification
record, grid lock) asks here first, by `lstat` alone, so nothing opens one that could block.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evalkit.errors import ConfigError

KINDS = {stat.S_IFLNK: "a link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
         stat.S_IFCHR: "a device", stat.S_IFBLK: "a device", stat.S_IFDIR: "a folder"}  # fmt: skip


def check_record(path: Path) -> None:
    """Refuse a records file that exists as anything but a regular file; an absent one is
    fine (it is made when first written)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    if stat.S_ISREG(mode):
        return
    kind = KINDS.get(stat.S_IFMT(mode), "not a regular file")
    raise ConfigError(
        f"{path}: is {kind}, not a regular file; evalkit keeps its records only in regular "
        "files: move it away"
    )

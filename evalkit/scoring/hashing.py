"""Content hashes of files and folders, independent of mtimes and of where they live."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from evalkit.scoring.fixturefiles import iter_files

__all__ = ["iter_files", "sha256_bytes", "sha256_file", "tree_hash"]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def tree_hash(root: Path, skip: frozenset[str] = frozenset()) -> str:
    """Hash of relative paths, executable bits and contents: what a fixture *is*. skip names
    root-relative folders hashed on their own (built output). A FIFO, socket or device is
    hashed by its kind and never opened; a file is read in chunks, whatever its size."""
    digest = hashlib.sha256()
    for path in iter_files(root, skip):
        rel = path.relative_to(root).as_posix()
        mode = "x" if os.access(path, os.X_OK) else "-"
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            body = (f"link:{os.readlink(path)}" if stat.S_ISLNK(info.st_mode)
                    else f"special:{stat.S_IFMT(info.st_mode):o}").encode()  # fmt: skip
            digest.update(f"{rel}\0{mode}\0{len(body)}\0".encode())
            digest.update(body)
            continue
        digest.update(f"{rel}\0{mode}\0{info.st_size}\0".encode())
        _update_from(digest, path)
    return "sha256:" + digest.hexdigest()


def _update_from(digest: hashlib._Hash, path: Path) -> None:
    """A file's bytes into digest, a megabyte at a time; an unreadable one adds a marker."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        digest.update(f"\0unreadable:{type(exc).__name__}".encode())

"""Content hashes of files and folders, independent of mtimes and of where they live."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from evalkit.scoring.fixturefiles import iter_files

__all__ = ["iter_files", "sha256_bytes", "sha256_file", "tree_hash"]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def tree_hash(root: Path, skip: frozenset[str] = frozenset()) -> str:
    """Hash of relative paths, executable bits and contents: what a fixture *is*. skip names
    root-relative folders hashed on their own (built output)."""
    digest = hashlib.sha256()
    for path in iter_files(root, skip):
        rel = path.relative_to(root).as_posix()
        mode = "x" if os.access(path, os.X_OK) else "-"
        if path.is_symlink():
            body = ("link:" + os.readlink(path)).encode()
        else:
            body = path.read_bytes()
        digest.update(f"{rel}\0{mode}\0{len(body)}\0".encode())
        digest.update(body)
    return "sha256:" + digest.hexdigest()

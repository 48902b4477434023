"""Content hashes of files and folders, independent of mtimes and of where they live, and
the hash of the code that scores.

The code that scores is found by location rather than by a list someone keeps: the hashed
set is the whole ``evalkit.scoring`` package plus the checker's own
package directory (for a built-in, ``evalkit/checkers/<eval>/``; for an outside
checker, the package its class lives in) and those of the checkers it is built on
(its base classes), less each package's reference parts:
a ``reference.py`` module or a ``reference/`` folder. A checker defined in a
top-level module of its own is hashed as that one file.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from evalkit.scoring.fixturefiles import iter_files

__all__ = [
    "iter_files",
    "scoring_code_hash",
    "scoring_files",
    "sha256_bytes",
    "sha256_file",
    "tree_hash",
]


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


REFERENCE_PARTS = frozenset({"reference.py", "reference"})
SCORING_PACKAGE = Path(__file__).resolve().parent


def checker_dir(cls: type) -> Path:
    """The folder (or single file) holding a checker class's scoring code."""
    module = sys.modules[cls.__module__]
    origin = Path(module.__file__ or "").resolve()
    if module.__package__:
        return origin.parent
    return origin


def checker_files(cls: type) -> list[Path]:
    """The checker's own scoring files: its package less the reference parts."""
    where = checker_dir(cls)
    if where.is_file():
        return [where]
    return [p for p in iter_files(where) if p.relative_to(where).parts[0] not in REFERENCE_PARTS]


def _checker_bases(cls: type) -> list[type]:
    """The checker classes cls is built on whose code lives outside evalkit.scoring."""
    return [
        base
        for base in cls.__mro__[1:]
        if hasattr(base, "check")
        and getattr(base, "name", None)
        and not checker_dir(base).is_relative_to(SCORING_PACKAGE)
        and checker_dir(base) != checker_dir(cls)
    ]


def scoring_files(cls: type) -> dict[str, Path]:
    """Every file whose code can change a verdict of this checker, by a stable label: the
    scoring package, the checker's own package, and the package of each checker it extends."""
    files = {
        f"scoring/{p.relative_to(SCORING_PACKAGE).as_posix()}": p
        for p in iter_files(SCORING_PACKAGE)
    }
    for prefix, owner in [("checker", cls)] + [("checker-base", b) for b in _checker_bases(cls)]:
        where = checker_dir(owner)
        base = where.parent if where.is_file() else where
        label = prefix if prefix == "checker" else f"{prefix}/{base.name}"
        for path in checker_files(owner):
            files[f"{label}/{path.relative_to(base).as_posix()}"] = path
    return files


def scoring_code_hash(cls: type) -> str:
    digest = hashlib.sha256()
    for label, path in sorted(scoring_files(cls).items()):
        body = path.read_bytes()
        digest.update(f"{label}\0{len(body)}\0".encode())
        digest.update(body)
    return "sha256:" + digest.hexdigest()

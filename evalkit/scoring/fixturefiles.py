"""What a fixture's files are: the one definition, shared by everything that reads one.

The lock hash, the sandbox copy, the diff baseline and replay all take a fixture's
files from here, so a stray cache folder can neither slip past the lock nor make a
kept diff fail to apply on a clean clone.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

SKIP_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".DS_Store",
        "Thumbs.db",
    }
)
SKIP_PATTERNS = ("*.pyc", "*.pyo", "*~", ".*.swp", ".*.swo", ".#*", "#*#")
"""What is never part of a fixture: version-control folders, caches a tool leaves behind,
and editor droppings. The one definition, used by the lock hash, the sandbox copy, the
diff baseline and replay, so a stray cache can neither slip past the lock nor break a diff."""


def skipped(name: str) -> bool:
    """True for a file or folder name that is never part of a fixture."""
    return name in SKIP_NAMES or any(fnmatch.fnmatchcase(name, p) for p in SKIP_PATTERNS)


def iter_files(root: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """Every file under root, sorted, less what ``skipped`` names and the root-relative
    folders in skip (a built output, hashed on its own)."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not skipped(d) and (here / d).relative_to(root).as_posix() not in skip
        )
        for name in sorted(filenames):
            if not skipped(name):
                found.append(Path(dirpath) / name)
    return found


def copy_fixture(source: Path, dest: Path, leave_out: Iterable[str] = ()) -> None:
    """Copy a fixture's files (as ``iter_files`` names them) to dest, keeping symlinks as
    links and the executable bits; leave_out names source-relative paths not to copy (what
    a scenario's sandbox goes without)."""
    omitted = {p.strip("/") for p in leave_out}

    def ignore(folder: str, names: list[str]) -> list[str]:
        here = Path(folder).relative_to(source)
        return [n for n in names if skipped(n) or (here / n).as_posix() in omitted]

    shutil.copytree(source, dest, symlinks=True, ignore=ignore)

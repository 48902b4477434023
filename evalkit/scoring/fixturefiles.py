"""What a fixture's files are: the one definition, shared by everything that reads one.

The lock hash, the sandbox copy, the diff baseline and replay all take a fixture's
files from here, so a stray cache folder can neither slip past the lock nor make a
kept diff fail to apply on a clean clone.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
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


def iter_files(root: Path) -> list[Path]:
    """Every file under root, sorted, less what ``skipped`` names."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skipped(d))
        for name in sorted(filenames):
            if not skipped(name):
                found.append(Path(dirpath) / name)
    return found


def copy_fixture(source: Path, dest: Path) -> None:
    """Copy a fixture's files (as ``iter_files`` names them) to dest, keeping symlinks as
    links and the executable bits."""
    shutil.copytree(source, dest, symlinks=True, ignore=_ignore)


def _ignore(_: str, names: list[str]) -> list[str]:
    return [n for n in names if skipped(n)]

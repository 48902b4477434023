"""What a fixture's files are: the one definition, shared by everything that reads one.

The lock hash, the sandbox copy, the diff baseline and replay all take a fixture's
files from here, so a stray cache folder can neither slip past the lock nor make a
kept diff fail to apply on a clean clone.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
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


_SKIP_PATTERN = re.compile("|".join(fnmatch.translate(p) for p in SKIP_PATTERNS))
SKIPPED_NAMES = "|".join(
    [*(re.escape(n) for n in sorted(SKIP_NAMES)), *(fnmatch.translate(p) for p in SKIP_PATTERNS)]
)
"""`skipped` as one regular expression over a whole name, for code that cannot import this
module (an observed script's wrapper hashing the project's tree)."""


@functools.lru_cache(maxsize=4096)
def skipped(name: str) -> bool:
    """True for a file or folder name that is never part of a fixture."""
    return name in SKIP_NAMES or _SKIP_PATTERN.match(name) is not None


def walk_files(root: Path | str, skip: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """Every file under root as (root-relative POSIX path, path), each folder's files by
    name before its subfolders by name, less what ``skipped`` names and the root-relative
    folders in skip (a built output, hashed on its own). Links count as files, except a
    link to a folder, which is neither listed nor followed."""
    found: list[tuple[str, str]] = []
    _walk(os.fspath(root), "", skip, found)
    return found


def _walk(folder: str, prefix: str, skip: frozenset[str], found: list[tuple[str, str]]) -> None:
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        return
    folders: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder = False
        (folders if is_folder else files).append(entry)
    for entry in sorted(files, key=lambda e: e.name):
        if not skipped(entry.name):
            found.append((prefix + entry.name, entry.path))
    for entry in sorted(folders, key=lambda e: e.name):
        rel = prefix + entry.name
        if skipped(entry.name) or rel in skip or entry.is_symlink():
            continue
        _walk(entry.path, rel + "/", skip, found)


def iter_relative_files(root: Path, skip: frozenset[str] = frozenset()) -> list[tuple[str, Path]]:
    """``walk_files`` with each file as a Path."""
    return [(rel, Path(path)) for rel, path in walk_files(root, skip)]


def iter_files(root: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """Every file under root, sorted, less what ``skipped`` names and the root-relative
    folders in skip (a built output, hashed on its own)."""
    return [path for _, path in iter_relative_files(root, skip)]


def copy_fixture(source: Path, dest: Path, leave_out: Iterable[str] = ()) -> None:
    """Copy a fixture's files (as ``iter_files`` names them) to dest, keeping symlinks as
    links and the executable bits; leave_out names source-relative paths not to copy (what
    a scenario's sandbox goes without)."""
    omitted = {p.strip("/") for p in leave_out}

    def ignore(folder: str, names: list[str]) -> list[str]:
        here = Path(folder).relative_to(source)
        return [n for n in names if skipped(n) or (here / n).as_posix() in omitted]

    shutil.copytree(source, dest, symlinks=True, ignore=ignore)

"""Paths a user names for evalkit to write: a path that cannot be written is one line naming
it (exit 2), never an internal error, and a file is replaced whole or not at all."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from evalkit.errors import ConfigError


def cannot_write(path: Path, exc: OSError) -> ConfigError:
    """The one-line error for an OSError met while writing `path`."""
    why = exc.strerror or type(exc).__name__
    return ConfigError(f"{path}: cannot write there: {why}")


def blocking_file(path: Path) -> Path | None:
    """The nearest folder on the way to `path` that exists but is not a folder, if any."""
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def check_new_file(path: Path) -> None:
    """Refuse a file path that is a folder, or lies under a file."""
    if path.is_dir():
        raise ConfigError(f"{path}: a folder; give the path of a file")
    blocker = blocking_file(path)
    if blocker is not None:
        raise ConfigError(f"{path}: {blocker} is a file, not a folder")


def make_folder(path: Path, shown: Path | None = None) -> None:
    """mkdir -p, with a failure named by `shown` (the path the user gave), else by `path`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(shown or path, exc) from None


def _partial(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def replace_file(path: Path, data: bytes) -> None:
    """Write `data` to a hidden file beside `path`, then rename it over `path`: a reader
    sees the old file or the new one, and a failed write leaves the old one."""
    make_folder(path.parent, path)
    partial = _partial(path)
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise cannot_write(path, exc) from None


def replace_folder(path: Path, files: Iterable[tuple[str, bytes]]) -> None:
    """Write `files` ((name, bytes) pairs, which may be made as they are written) into a
    hidden folder beside `path`, then swap it in for `path`; the folder it replaces is
    removed only once the new one is in place."""
    make_folder(path.parent, path)
    partial = _partial(path)
    old = path.with_name(f".{path.name}.{os.getpid()}.old")
    try:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for name, data in files:
            (partial / name).write_bytes(data)
        if path.exists():
            os.rename(path, old)
        os.rename(partial, path)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        if old.exists() and not path.exists():
            os.rename(old, path)
        raise cannot_write(path, exc) from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)

"""Git's tree hash of a project folder, the files a kept diff covers and nothing else.

An observed script's wrapper records it as each run ends, and scoring takes it again of
the project the agent left (in `verify`, of the folder replayed from the kept diff): a run
whose end hash is the final one ran on the tree the agent handed over, however the files
got there (an editor's tool, `sed -i`, a script), which no order of transcript lines can
say. The wrapper runs this module's own text, so the one definition is used on both sides;
it is standard library only and reads nothing but the folder. The files are those
`fixturefiles.walk_files` lists (the wrapper is handed its skip lists); git's own object
format and order, so `git write-tree` on the same files gives the same hash.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat

MAX_FILES = 50_000
MAX_BYTES = 256 * 1024 * 1024
"""Past either, a tree gets no hash (None): a run on it is never counted on the final tree."""


class _TooLarge(Exception):
    pass


def _object(kind: bytes, body: bytes) -> bytes:
    return hashlib.sha1(kind + b" " + str(len(body)).encode() + b"\0" + body).digest()


def _blob(path: str, budget: list[int]) -> tuple[bytes, bytes] | None:
    """(mode, object id) of a regular file or link, as git stores it; None for anything
    else (a pipe or socket is never opened: the wrapper must not block)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return b"120000", _object(b"blob", os.fsencode(os.readlink(path)))
    if not stat.S_ISREG(info.st_mode):
        return None
    budget[0] -= 1
    budget[1] -= info.st_size
    if budget[0] < 0 or budget[1] < 0:
        raise _TooLarge
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(info.st_size + 1)
    mode = b"100755" if info.st_mode & stat.S_IXUSR else b"100644"
    return mode, _object(b"blob", data)


def _tree(
    folder: str, rel: str, skip: re.Pattern[str], replace: dict[str, str], budget: list[int]
) -> bytes | None:
    """The tree object id of folder, or None when it holds no file (git records no empty
    tree inside another)."""
    entries: list[tuple[bytes, bytes, bytes]] = []
    with os.scandir(folder) as listing:
        children = sorted(listing, key=lambda e: e.name)
    for child in children:
        if skip.fullmatch(child.name):
            continue
        path = rel + child.name
        name = os.fsencode(child.name)
        if child.is_dir(follow_symlinks=False):
            sub = _tree(child.path, path + "/", skip, replace, budget)
            if sub is not None:
                entries.append((name + b"/", b"40000", sub))
            continue
        if child.is_symlink() and os.path.isdir(child.path):
            continue
        found = _blob(replace.get(path, child.path), budget)
        if found is not None:
            entries.append((name, *found))
    if not entries and rel:
        return None
    entries.sort(key=lambda e: e[0])
    body = b"".join(mode + b" " + name.rstrip(b"/") + b"\0" + oid for name, mode, oid in entries)
    return _object(b"tree", body)


def tree_hash(root: str, skip_pattern: str, replace: dict[str, str] | None = None) -> str | None:
    """Git's tree hash of root's files, less the names skip_pattern matches; a path in
    replace hashed from the file it names (an observed script's wrapper hashed as the real
    script the kept diff shows). None when the folder cannot be read whole or is too large."""
    try:
        oid = _tree(root, "", re.compile(skip_pattern), replace or {}, [MAX_FILES, MAX_BYTES])
    except (OSError, _TooLarge, RecursionError):
        return None
    return oid.hex() if oid is not None else None

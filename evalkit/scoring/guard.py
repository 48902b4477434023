"""Detecting a write into a guarded real-world path by its effect, not only by the transcript.

Before a rep, every guarded path is fingerprinted cheaply (relative path, size, mtime of
every entry, no reads); after it, again, and only the entries that differ are hashed. The
walk never follows a symlink and never writes: the real vault is only ever looked at.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from evalkit.models import GuardEntry, GuardPath, GuardRecord

Fingerprint = dict[str, tuple[int, int]]
"""relative path ('.' for the root) -> (size, mtime_ns); size -1 marks a folder."""

HASH_LIMIT = 16 * 1024 * 1024


def fingerprint(root: Path) -> Fingerprint:
    """Every entry under root, by lstat only. An absent root is an empty fingerprint."""
    found: Fingerprint = {}
    try:
        top = os.lstat(root)
    except OSError:
        return found
    found["."] = (-1 if os.path.isdir(root) and not os.path.islink(root) else top.st_size, 0)
    if found["."][0] != -1:
        found["."] = (top.st_size, top.st_mtime_ns)
        return found
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    rel = prefix + entry.name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            found[rel] = (-1, 0)
                            stack.append((entry.path, rel + "/"))
                        else:
                            st = entry.stat(follow_symlinks=False)
                            found[rel] = (st.st_size, st.st_mtime_ns)
                    except OSError:
                        continue
        except OSError:
            continue
    return found


def digest(fp: Fingerprint) -> str:
    """Names a whole fingerprint in evidence; the sorted repr keeps it one C-level pass."""
    text = repr(sorted(fp.items()))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _sha(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > HASH_LIMIT:
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def observe(root: Path, before: Fingerprint, after: Fingerprint) -> GuardPath:
    """What changed under root between two fingerprints; only changed files are read."""
    changed = {}
    differing = [] if before == after else sorted(set(before.items()) ^ set(after.items()))
    for rel in sorted({rel for rel, _ in differing}):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        sha = _sha(root / rel) if new is not None and new[0] != -1 else None
        changed[rel] = GuardEntry(
            before=list(old) if old else None, after=list(new) if new else None, sha256=sha
        )
    return GuardPath(
        root=str(root),
        before_count=len(before),
        before_digest=digest(before),
        after_count=len(after),
        after_digest=digest(after),
        changed=changed,
    )


class Watch:
    """Fingerprints of guarded roots taken at the start of a rep, compared at its end."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [Path(os.path.normpath(r.expanduser())) for r in roots]
        self.before = {r: fingerprint(r) for r in self.roots}

    def finish(self) -> GuardRecord:
        return GuardRecord(paths=[observe(r, self.before[r], fingerprint(r)) for r in self.roots])

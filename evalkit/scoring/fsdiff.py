"""What changed in a sandbox folder against its pristine fixture, by content, never by mtime."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.scoring.hashing import iter_files, sha256_file


@dataclass
class FolderChanges:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def written(self) -> list[str]:
        """Paths that exist now and differ from the fixture: notes someone wrote."""
        return sorted(self.added + self.changed)

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.deleted)


def _fingerprint(path: Path) -> str:
    if path.is_symlink():
        return "link:" + os.readlink(path)
    return sha256_file(path)


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p for p in iter_files(root)}


def compare(fixture: Path, current: Path, excluded: tuple[str, ...] = ()) -> FolderChanges:
    def kept(rel: str) -> bool:
        return not any(
            rel == e.rstrip("/") or rel.startswith(e.rstrip("/") + "/") for e in excluded
        )

    before, after = _files(fixture), _files(current)
    out = FolderChanges()
    for rel in sorted(after):
        if not kept(rel):
            continue
        if rel not in before:
            out.added.append(rel)
        elif _fingerprint(after[rel]) != _fingerprint(before[rel]):
            out.changed.append(rel)
    out.deleted = [rel for rel in sorted(before) if rel not in after and kept(rel)]
    return out


def links_into(root: Path, target: Path) -> list[str]:
    """Paths under root that are symlinks resolving at or under target."""
    target = target.expanduser().resolve()
    hits = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                resolved = path.resolve()
                if resolved == target or target in resolved.parents:
                    hits.append(path.relative_to(root).as_posix())
    return sorted(hits)

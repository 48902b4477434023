"""The one rule for every path a results folder's own records name (a manifest line's
evidence folder and kept files): it must lead inside that folder, links followed.

The records were written by whoever had the folder, and the evidence in it by an agent under
test; a path that leads elsewhere (`../..`, an absolute path, a link out) is tampering, so it
is refused, never read, copied or shown.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evalkit.errors import RefusedError
from evalkit.models import EvidenceLine

OUTSIDE = "outside the folder"


class OutsideFolderError(RefusedError):
    """A path read from a results folder's records leads outside that folder."""


class Confinement:
    """The containment rule for one folder, checked cheaply for many paths: the folder is
    resolved once, and a path with no `..` whose every component below the folder is a plain
    folder or file (not a link) leads where it reads, inside it, so no other resolving is
    needed. A path with a link or a `..` in it is resolved whole, links followed, as before.
    Folders found plain are remembered for the life of the object (one command's pass)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root.resolve()
        self._prefix = str(self.base).rstrip("/") + "/"
        self._plain: set[str] = set()

    def __call__(self, *parts: str) -> Path:
        """root joined with parts and resolved (links followed), when that lies inside root."""
        joined = os.path.join(self._prefix, *parts)
        if joined.startswith(self._prefix) and ".." not in joined.split("/"):
            path = os.path.normpath(joined)
            if path.startswith(self._prefix) and self._plain_below(path):
                return Path(path)
        return self._resolved(parts)

    def _plain_below(self, path: str) -> bool:
        """No component of path below the folder is a link (a missing one ends the walk:
        nothing below it can be one)."""
        at = len(self._prefix) - 1
        while at != -1:
            at = path.find("/", at + 1)
            step = path if at == -1 else path[:at]
            if step in self._plain:
                continue
            try:
                mode = os.lstat(step).st_mode
            except OSError:
                return True
            if stat.S_ISLNK(mode):
                return False
            if stat.S_ISDIR(mode):
                self._plain.add(step)
            elif at != -1:
                return True
        return True

    def _resolved(self, parts: tuple[str, ...]) -> Path:
        path = self.base.joinpath(*parts).resolve()
        if path == self.base or not path.is_relative_to(self.base):
            shown = "/".join(parts)
            raise OutsideFolderError(
                f"{shown}: leads {OUTSIDE} {self.base} (to {path}); the records were tampered with"
            )
        return path

    def evidence_folder(self, line: EvidenceLine) -> Path:
        """The line's evidence folder, inside the folder."""
        return self(line.evidence)

    def evidence_files(self, line: EvidenceLine) -> dict[str, Path]:
        """Each kept file of the line by role, every one inside the folder."""
        return {role: self(line.evidence, rel) for role, rel in line.files.items()}


def confined(root: Path, *parts: str) -> Path:
    """root joined with parts and resolved (links followed), when that lies inside root."""
    return Confinement(root)(*parts)


def evidence_folder(root: Path, line: EvidenceLine) -> Path:
    """The line's evidence folder, inside root."""
    return Confinement(root).evidence_folder(line)


def evidence_files(root: Path, line: EvidenceLine) -> dict[str, Path]:
    """Each kept file of the line by role, every one inside root."""
    return Confinement(root).evidence_files(line)


def escapes(root: Path, line: EvidenceLine) -> list[str]:
    """A problem naming each of the line's paths that leads outside root (none when all are
    inside)."""
    try:
        evidence_folder(root, line)
    except OutsideFolderError:
        return [f"evidence {line.evidence!r} leads {OUTSIDE}"]
    found = []
    for role, rel in sorted(line.files.items()):
        try:
            confined(root, line.evidence, rel)
        except OutsideFolderError:
            found.append(f"{role} {rel!r} leads {OUTSIDE}")
    return found

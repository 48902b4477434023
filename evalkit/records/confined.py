"""The one rule for every path a results folder's own records name (a manifest line's
evidence folder and kept files): it must lead inside that folder, links followed.

The records were written by whoever had the folder, and the evidence in it by an agent under
test; a path that leads elsewhere (`../..`, an absolute path, a link out) is tampering, so it
is refused, never read, copied or shown.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import RefusedError
from evalkit.models import EvidenceLine

OUTSIDE = "outside the folder"


class OutsideFolderError(RefusedError):
    """A path read from a results folder's records leads outside that folder."""


def confined(root: Path, *parts: str) -> Path:
    """root joined with parts and resolved (links followed), when that lies inside root."""
    base = root.resolve()
    path = base.joinpath(*parts).resolve()
    if path == base or not path.is_relative_to(base):
        shown = "/".join(parts)
        raise OutsideFolderError(
            f"{shown}: leads {OUTSIDE} {base} (to {path}); the records were tampered with"
        )
    return path


def evidence_folder(root: Path, line: EvidenceLine) -> Path:
    """The line's evidence folder, inside root."""
    return confined(root, line.evidence)


def evidence_files(root: Path, line: EvidenceLine) -> dict[str, Path]:
    """Each kept file of the line by role, every one inside root."""
    return {role: confined(root, line.evidence, rel) for role, rel in line.files.items()}


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

"""Where an export may be written: the rule every file evalkit writes for a user follows
(`records/pages/target.py`), said once for every export format."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import RefusedError
from evalkit.outpaths import check_new_file
from evalkit.records.pages.target import read_paths
from evalkit.suite.config import Suite


def check_export_target(suite: Suite, folder: Path, out: Path, what: str) -> None:
    """Refuse OUT on or inside anything evalkit reads of the folder or the suite, and over
    anything but a regular file; `what` names the export in the refusal."""
    read = read_paths(suite, folder)
    resolved = out.resolve()
    for candidate in (resolved, *resolved.parents):
        if candidate in read:
            verb = "is" if candidate == resolved else "lies inside"
            raise RefusedError(
                f"{out}: {verb} {read[candidate]}, which evalkit reads; write the {what} elsewhere"
            )
    check_new_file(out)
    if out.exists() and not out.is_file():
        raise RefusedError(f"{out}: exists and is not a regular file; refusing to write there")

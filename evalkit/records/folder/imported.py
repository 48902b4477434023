"""A results folder `evalkit import` wrote from another tool's log, and the one label saying so.

Its rows say what the other tool recorded; evalkit ran none of its reps and kept no evidence
to replay, so nothing can re-derive them. `verify` and `report` read a folder holding the
label as NOT PUBLISHABLE, naming the import first, and `gate` refuses it: a verdict evalkit
never drew cannot be trusted as one it did.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from evalkit.errors import RefusedError
from evalkit.models import ImportRecord
from evalkit.records.folder.regular import check_record

IMPORTED = "imported.json"
"""The label: present in a folder `evalkit import` wrote, and in no other."""
IMPORTED_REASON = "imported"
FORMATS = {"inspect": "Inspect AI"}
"""Each outside format `evalkit import` reads, by the name its label keeps."""


def label_path(root: Path) -> Path:
    return root / IMPORTED


def is_imported(root: Path) -> bool:
    """Whether the folder carries the label, whatever it holds: a label that no longer reads
    still marks the folder as imported, never as a measurement."""
    path = label_path(root)
    check_record(path)
    return path.exists()


def read_label(root: Path) -> ImportRecord | None:
    """The label when it reads; None when there is none or it does not read."""
    if not is_imported(root):
        return None
    try:
        return ImportRecord.model_validate_json(label_path(root).read_bytes())
    except (ValidationError, ValueError, OSError):
        return None


def imported_problem(root: Path) -> str | None:
    """Why an imported folder is never publishable, as `verify` and `report` name it first;
    None for any other folder."""
    if not is_imported(root):
        return None
    label = read_label(root)
    source = f"the {FORMATS[label.format]} log {label.source}" if label else "another tool's log"
    return (
        f"{IMPORTED_REASON}: its rows come from {source}; evalkit ran none of its reps and "
        "kept no evidence, so nothing re-derives them"
    )


def refuse_imported(root: Path, command: str) -> None:
    """One line refusing a command that would trust an imported folder's verdicts."""
    if is_imported(root):
        raise RefusedError(
            f"{command}: {root}: an imported folder (`evalkit import`), never PUBLISHABLE; "
            f"{command} only folders evalkit ran and verified"
        )

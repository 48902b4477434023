"""The one writer of a rep's evidence: every file under its name from the one table
(`models.EVIDENCE_FILES`), and the manifest line naming each with its hash.

`run` keeps a fresh attempt through `keep_attempt`, `rescore` keeps a re-scored one the same
way (the rep's other files carried over), and `merge` carries whole kept folders with
`carry_folder`. A declaration is never rebuilt here: the caller hands the one it recorded.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalkit.models import EVIDENCE_FILES, EvidenceLine, Verdict
from evalkit.records.folder.workdir import Workdir
from evalkit.records.kept.evidence import bundle_id
from evalkit.scoring.hashing import sha256_file
from evalkit.scoring.observed import log_path

TRANSCRIPT = EVIDENCE_FILES["transcript"]
STDERR = EVIDENCE_FILES["stderr"]
CHECK = EVIDENCE_FILES["check"]
JUDGE = EVIDENCE_FILES["judge"]
PROCESS = EVIDENCE_FILES["process"]
GUARD = EVIDENCE_FILES["guard"]
OBSERVED = EVIDENCE_FILES["observed"]
CHECKER_ERROR = EVIDENCE_FILES["checker_error"]


def keep_text(folder: Path, role: str, text: str) -> dict[str, str]:
    name = EVIDENCE_FILES[role]
    (folder / name).write_text(text, encoding="utf-8")
    return {role: name}


def keep_json(folder: Path, role: str, record: BaseModel) -> dict[str, str]:
    return keep_text(folder, role, record.model_dump_json(indent=2) + "\n")


def keep_check(folder: Path, verdict: Verdict) -> dict[str, str]:
    """check.json, and judge.json when a judge answered."""
    kept = keep_json(folder, "check", verdict)
    if verdict.judge is not None:
        kept.update(keep_json(folder, "judge", verdict.judge))
    return kept


def keep_log(sandbox: Path, folder: Path) -> dict[str, str]:
    """The observed scripts' run log copied in (a link or folder in its place is not
    followed: the rep then has no log, which scoring names)."""
    log = log_path(sandbox)
    if log.is_file() and not log.is_symlink():
        shutil.copyfile(log, folder / OBSERVED, follow_symlinks=False)
        return {"observed": OBSERVED}
    return {}


def keep_checker_error(folder: Path) -> dict[str, str]:
    """The checker's traceback, when the decision left one in the folder."""
    return {"checker_error": CHECKER_ERROR} if (folder / CHECKER_ERROR).is_file() else {}


def carry_files(source: Path, folder: Path, files: dict[str, str]) -> dict[str, str]:
    """Kept files of another evidence folder, copied under the same names."""
    for rel in files.values():
        shutil.copy2(source / rel, folder / rel)
    return dict(files)


def carry_file(source: str, target: str) -> None:
    """A hard link where the target shares the source's file system (kept evidence is never
    written again, and the manifest holds each file's hash, which `verify` checks); a copy
    elsewhere. A 100,000-rep grid keeps about 700,000 files: copying them is most of a merge's
    time."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def carry_folder(source: Path | str, target: Path | str) -> None:
    """A whole kept evidence folder (checked to hold no link), byte for byte, into target, an
    empty folder the caller made: subfolders made as `shutil.copytree` would, without its stat
    per file."""
    with os.scandir(source) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                inner = os.path.join(target, entry.name)
                os.mkdir(inner)
                carry_folder(entry.path, inner)
            else:
                carry_file(entry.path, os.path.join(target, entry.name))


def keep_attempt(
    records: Workdir,
    folder: Path,
    files: dict[str, str],
    verdict: Verdict,
    declarations: dict[str, Any],
    *,
    run_id: str,
    scenario: str,
    model: str,
    rep: int,
    attempt: int,
    results: str,
    usage: dict[str, int | float],
    rescore_of: str = "",
) -> EvidenceLine:
    """Write the verdict beside the files already kept in folder and return the manifest
    line that names them all, with their hashes and the bundle of the declarations given."""
    files = {**files, **keep_check(folder, verdict)}
    return EvidenceLine(
        run_id=run_id,
        scenario=scenario,
        model=model,
        rep=rep,
        evidence=records.relative(folder),
        files=files,
        file_hashes={role: sha256_file(folder / rel) for role, rel in files.items()},
        declarations=declarations,
        bundle_id=bundle_id(declarations),
        verdict=verdict.verdict,
        results=results,
        attempt=attempt,
        usage=usage,
        rescore_of=rescore_of,
    )

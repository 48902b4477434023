"""A rep's evidence files are named in one table (`models.EVIDENCE_FILES`) and written by one
writer (`records/folder/keep.py`): no other module spells a name, so a writer and a reader can never
disagree about one."""

from __future__ import annotations

import ast
from pathlib import Path

import evalkit
from evalkit.models import DIFF_SUFFIX, EVIDENCE_FILES, EvidenceLine, Verdict
from evalkit.records.folder.keep import keep_attempt, keep_text
from evalkit.records.folder.workdir import Workdir
from evalkit.scoring.hashing import sha256_file

PACKAGE = Path(evalkit.__file__).parent
TABLE = PACKAGE / "models" / "records.py"


def spelled_names(source: str) -> list[str]:
    """Each string constant of source that is an evidence file name or the diff suffix,
    alone or as a glob or a piece of an f-string, by line."""
    names = {*EVIDENCE_FILES.values(), DIFF_SUFFIX}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.strip().lstrip("*") in names:
                found.append(f"line {node.lineno}: {node.value!r}")
    return found


def test_no_module_but_the_table_spells_an_evidence_file_name() -> None:
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != TABLE and (hits := spelled_names(path.read_text(encoding="utf-8")))
    }
    assert found == {}, found


def test_a_spelled_name_is_found_alone_in_a_glob_or_in_an_f_string() -> None:
    planted = (
        'A = "process.json"\n'
        'B = folder.glob("*.diff")\n'
        'C = f"{name}.diff"\n'
        'D = f"check.json {d}"\n'
        '"""A docstring that mentions check.json is prose, not a name."""\n'
    )
    assert [hit.split(":")[0] for hit in spelled_names(planted)] == [
        "line 1",
        "line 2",
        "line 3",
        "line 4",
    ]


def test_an_attempt_is_kept_under_the_tables_names_each_with_its_hash(tmp_path: Path) -> None:
    records = Workdir(tmp_path / "work")
    folder = records.claim_evidence_folder("r1", "P1-L1-x", "policy:oracle", 1, 1)
    files = keep_text(folder, "transcript", "{}\n")
    verdict = Verdict(
        scenario="P1-L1-x", model="policy:oracle", polarity="positive", axis_a="A:PASS",
        axis_b="B:PASS", verdict="PASS",
    )  # fmt: skip
    decl = {"suite": "s", "variant": "terse", "subject_hash": "sha256:abc"}

    line = keep_attempt(
        records, folder, files, verdict, decl, run_id="r1", scenario="P1-L1-x",
        model="policy:oracle", rep=1, attempt=1, results="results.tsv", usage={},
    )  # fmt: skip

    assert isinstance(line, EvidenceLine)
    assert line.files == {role: EVIDENCE_FILES[role] for role in ("transcript", "check")}
    assert line.file_hashes == {role: sha256_file(folder / rel) for role, rel in line.files.items()}
    assert line.declarations == decl and line.evidence == records.relative(folder)

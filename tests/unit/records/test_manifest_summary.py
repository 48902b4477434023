"""A manifest line as `report` reads it: the facts it needs, the bundle's declarations held
once, and the same lines called unreadable as the full reader calls them."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.models import EvidenceLine
from evalkit.records.folder.workdir import Workdir


def _line(rep: int, suite: str = "s", bundle: str = "b") -> EvidenceLine:
    return EvidenceLine(
        run_id="r1",
        scenario="P1",
        model="m",
        rep=rep,
        evidence=f"evidence/r1/P1/m/rep-{rep}",
        files={"transcript": "transcript.jsonl"},
        file_hashes={"transcript": "ab" * 32},
        declarations={"suite": suite, "cli_flags": ["-p"], "timeout": 900.0},
        bundle_id=bundle,
        verdict="PASS",
        usage={"turns": rep},
    )


def test_the_lines_of_one_bundle_share_one_copy_of_its_declarations(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    for rep in (1, 2, 3):
        records.append_evidence_line(_line(rep))
    first, second, third = records.read_manifest_summaries().items
    assert first.declarations is second.declarations is third.declarations
    assert first.declarations == _line(1).declarations
    assert [x.usage for x in (first, second, third)] == [{"turns": 1}, {"turns": 2}, {"turns": 3}]


def test_a_line_declaring_another_suite_under_the_same_bundle_keeps_its_own(
    tmp_path: Path,
) -> None:
    records = Workdir(tmp_path)
    records.append_evidence_line(_line(1))
    records.append_evidence_line(_line(2, suite="other"))
    assert records.recorded_suites([], records.read_manifest_summaries().items) == {"s", "other"}


def test_a_summary_reader_calls_unreadable_the_lines_the_full_reader_does(
    tmp_path: Path,
) -> None:
    records = Workdir(tmp_path)
    good = json.loads(_line(1).model_dump_json())
    broken = [
        {**good, "files": "transcript.jsonl"},
        {**good, "file_hashes": ["ab"]},
        {**good, "evidence": 7},
        {**good, "declarations": ["suite"]},
        {**good, "verdict": "MAYBE"},
    ]
    text = "\n".join(json.dumps(x) for x in [good, *broken]) + "\n{not json\n\n"
    records.evidence_index.write_text(text)
    full = records.read_evidence_index()
    summaries = records.read_manifest_summaries()
    assert summaries.problems == full.problems and len(full.problems) == 6
    assert [x.rep for x in summaries.items] == [x.rep for x in full.items] == [1]


def test_full_lines_share_declarations_only_when_they_read_the_same(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    records.append_evidence_line(_line(1))
    records.append_evidence_line(_line(2))
    text = records.evidence_index.read_text()
    records.evidence_index.write_text(text + text.splitlines()[0].replace("900.0", "900") + "\n")
    first, second, third = records.read_evidence_index().items
    assert first.declarations is second.declarations
    assert third.declarations is not first.declarations
    assert type(third.declarations["timeout"]) is int

"""A row of a backend only the machine running it can prove (srt on macOS) is publishable
only when its invocation's preflight saw `policy:escape` hold on that machine; otherwise it
is flagged as an unconfined row is."""

from __future__ import annotations

from evalkit.models import EvidenceLine
from evalkit.records.verify.verdict import declared_problems


def _line(rep: int, **declared: str) -> EvidenceLine:
    return EvidenceLine(
        run_id="r1", scenario="P1", model="m", rep=rep, evidence=f"evidence/r1/P1/m/rep-{rep}",
        files={"transcript": "transcript.jsonl"}, file_hashes={"transcript": "ab" * 32},
        declarations={"lock": "frozen", "confinement": "srt", **declared},
        bundle_id="b", verdict="PASS",
    )  # fmt: skip


def _unproven(lines: list[EvidenceLine]) -> list[str]:
    return [p for p in declared_problems(lines) if "escape canaries" in p]


def test_rows_whose_preflight_saw_the_escape_hold_on_their_machine_are_not_flagged() -> None:
    assert _unproven([_line(1, escape_proof="held"), _line(2, escape_proof="held")]) == []


def test_rows_whose_escape_proof_failed_or_never_ran_are_flagged_and_named() -> None:
    found = _unproven([_line(1, escape_proof="failed"), _line(2, escape_proof="none"),
                       _line(3, escape_proof="held")])  # fmt: skip
    assert len(found) == 1 and found[0].startswith("2 row(s)"), found


def test_a_backend_that_declares_no_proof_needs_none() -> None:
    assert _unproven([_line(1), _line(2)]) == []

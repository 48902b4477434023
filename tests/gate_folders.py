"""Results folders for the gate's tests: both sets, any verdict per rep, and a verification
record that calls them PUBLISHABLE, so that a test reaches the decision it is about."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.models import EvidenceLine, ResultRow, VerdictValue, VerificationRecord
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import EVIDENCE_INDEX, Workdir
from evalkit.records.verify.record import VERDICT, record_key, seal
from evalkit.suite.config import Suite

DECL: dict[str, Any] = {
    "suite": "os-vault-write",
    "fixture_hashes": {"project": "sha256:aa", "vault": "sha256:bb"},
    "rubric_sha256": "cc",
    "plugin_hashes": {"fixtures/plugins/os-vault": "sha256:dd"},
    "checker": "vault-write@1",
    "checker_source": "sha256:ee",
}
Decide = Callable[[str, str, int], VerdictValue]
"""(scenario id, polarity, rep) -> the rep's verdict"""


def passes(_: str, __: str, ___: int) -> VerdictValue:
    return "PASS"


def writes_always(_: str, polarity: str, __: int) -> VerdictValue:
    return "PASS" if polarity == "positive" else "FAIL"


def fabricate(
    suite: Suite,
    work: Path,
    model: str,
    decide: Decide = passes,
    reps: int = 1,
    only: set[str] | None = None,
    verified: bool = True,
    declared: dict[str, Any] | None = None,
) -> Path:
    """A results folder over both sets, and (unless told not to) a verification record that
    calls it PUBLISHABLE, keyed by its records as they are. `declared` adds to every rep's
    declarations (an agent, a judge)."""
    work.mkdir(parents=True, exist_ok=True)
    for sf in suite.scenarios("all"):
        if only is not None and sf.id.split("-")[0] not in only:
            continue
        decl = {**DECL, "scenario_sha256": sf.sha256, "model": model, **(declared or {})}
        bundle = "evb-" + str(abs(hash(json.dumps(decl, sort_keys=True))))[:16]
        for rep in range(1, reps + 1):
            value = decide(sf.id, sf.scenario.polarity, rep)
            append_row(
                work / "results.tsv",
                ResultRow(
                    scenario=sf.id,
                    model=model,
                    a="A:PASS",
                    b="B:PASS",
                    verdict=value,
                    reasons="-",
                    rep=rep,
                    run_id="r1",
                    cli_version="2.1.328",
                    bundle_id=bundle,
                ),
            )
            line = EvidenceLine(
                run_id="r1",
                scenario=sf.id,
                model=model,
                rep=rep,
                evidence="-",
                files={},
                declarations=decl,
                bundle_id=bundle,
                verdict=value,
            )
            with (work / EVIDENCE_INDEX).open("a") as fh:
                fh.write(line.model_dump_json() + "\n")
    if verified:
        records = Workdir(work)
        key = record_key(
            suite, records, records.read_plans().items, records.read_evidence_index().items
        )
        record = VerificationRecord(
            suite=suite.name,
            verified_at="2026-01-01T00:00:00+00:00",
            evalkit_version="test",
            key=key,
            trials=1,
            failed_trials=0,
            all_rederived=True,
            publishable=True,
            problems=[],
        )
        record.key[VERDICT] = seal(record)
        records.write_verification(record)
    return work

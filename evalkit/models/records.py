"""What a results folder keeps: evidence lines, plans and the verification record."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from evalkit.models.base import SCHEMA_VERSION, Model, VerdictValue

EVIDENCE_FILES: dict[str, str] = {
    "transcript": "transcript.jsonl",
    "stderr": "stderr.txt",
    "check": "check.json",
    "judge": "judge.json",
    "process": "process.json",
    "guard": "guard.json",
    "observed": "observed.jsonl",
    "checker_error": "checker-error.txt",
    "telemetry": "telemetry.jsonl",
    "served": "served.jsonl",
}
"""The one table of a rep's evidence file names: role (a key of `EvidenceLine.files`) -> the
file's name in its evidence folder. `records/folder/keep.py` writes them; no other module
spells one."""
DIFF_SUFFIX = ".diff"
"""A fixture folder's kept diff is `<folder>.diff`, role `<folder>_diff`."""


class EvidenceLine(Model):
    """One rep in WORKDIR/manifest.jsonl: where its evidence is and what it was run against."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    scenario: str
    model: str
    rep: int
    evidence: str = Field(description="folder relative to WORKDIR")
    files: dict[str, str] = Field(description="role -> path relative to the evidence folder")
    file_hashes: dict[str, str] = Field(
        default_factory=dict, description="role -> sha256 of that file, as it was kept"
    )
    declarations: dict[str, Any]
    bundle_id: str
    verdict: VerdictValue
    results: str = Field("", description="the results TSV the row went to, relative to WORKDIR")
    attempt: int = Field(1, description="1, or the retry this is (2 for the first retry)")
    superseded_by: int | None = Field(
        None, description="the attempt that replaced this one; its row is the rep's row"
    )
    retry_reason: str = Field("", description="why this attempt was run again, when it was")
    supersedes: int | None = Field(
        None,
        description="the attempt of this rep, recorded `ERROR interrupted`, that `grid "
        "--resume` ran again as this one: that attempt's line, row and evidence stay, replaced",
    )
    rescore_of: str = Field(
        "",
        description="the run id of the rep this line scores again with newer scoring code "
        "(`evalkit results rescore`); that rep's row stays in the file, replaced",
    )
    usage: dict[str, int | float] = Field(
        default_factory=dict, description="tokens, turns, duration and the CLI's cost estimate"
    )


class ServedRequest(Model):
    """One request a scripted server saw, as it recorded it outside the sandbox (a line of
    served.jsonl): what was asked (its conversation's opening and the assistant turns it
    carried, each by its key) and the turn it answered with in full. Keys are digests
    (`scoring/tampering/served.py`), so the record holds no text of the conversation."""

    kind: Literal["turn", "side", "aside", "fault", "held", "probe", "other"] = Field(
        description="turn: a step of the script asked and answered; side: a request with no "
        "tools, or a subagent's; aside: a request of the conversation that asks no step (a "
        "next-speaker check), held to the conversation like a turn; fault: answered by the "
        "policy's fault or cut off; held: past a turn cap; probe: a HEAD request, which "
        "carries no conversation and gets none; other: any other path or body"
    )
    root: str = Field("", description="digest of the conversation's opening user message")
    history: list[str] = Field(
        default_factory=list, description="the key of each assistant turn the request carried"
    )
    served: str = Field("", description="the key of the turn sent back in full; empty if none")
    items: list[str] = Field(
        default_factory=list,
        description="the keys of that turn's items as its agent's stream shows them, for an "
        "agent whose stream does not group them by turn (scoring/streams/items.py)",
    )


class PlanCell(Model):
    scenario: str
    model: str
    reps: int
    variant: str = Field("", description="the subject variant; empty for the run's own")
    cli: str = Field("", description="the CLI version asked for (--cli); empty for the default")
    rep_numbers: list[int] = Field(
        default_factory=list, description="which reps, when not 1..reps (a shard's slice)"
    )

    def numbers(self) -> list[int]:
        return self.rep_numbers or list(range(1, self.reps + 1))


class CellExpectation(Model):
    """The verdict a reference policy must get on one scenario: what `calibrate` holds it to."""

    scenario: str
    model: str
    verdict: VerdictValue
    reason: str | None = Field(None, description="a reason or flag the row must name, if any")
    attempt: int = Field(1, description="the attempt the verdict must come from")


class Plan(Model):
    """What a run or grid set out to do, so anyone can count what should be there."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    created: str
    command: str
    cells: list[PlanCell]
    results: str = Field("", description="the results TSV, relative to WORKDIR")
    skipped: list[PlanCell] = Field(
        default_factory=list,
        description="reps of this run_id's plan that will not run, and why (skip_reason)",
    )
    skip_reason: str = ""
    grid_digest: str = Field("", description="a sharded grid's digest: the same on every shard")
    world_start: str = Field(
        "", description="the day the world's git history is dated from (YYYY-MM-DD)"
    )
    shard: str = Field("", description="I/N of a sharded grid")
    grid_cells: int = Field(0, description="a sharded grid's cells over all its shards")
    suite: str = Field("", description="the suite whose scenarios the plan runs")
    inner_loop: bool = Field(
        False, description="a reduced grid (failed cells plus controls), not the whole set"
    )
    calibration: bool = Field(
        False, description="written by `calibrate`: reference policies, not a measurement"
    )
    expected_verdicts: list[CellExpectation] = Field(
        default_factory=list, description="a calibration's expected verdict of every cell"
    )
    preflight: Literal["", "passed", "skipped"] = Field(
        "",
        description="for a real model: `passed` when the self-test and a policy:oracle rep "
        "through the CLI proved the instrument first, `skipped` with --skip-preflight; empty "
        "when every model is a policy",
    )


class VerificationRecord(Model):
    """What `evalkit verify` concluded about a results folder, and the files it concluded it
    from, by hash: `report` reads the verdict only while every hash still matches."""

    schema_version: int = SCHEMA_VERSION
    suite: str
    verified_at: str
    evalkit_version: str
    key: dict[str, str] = Field(
        description="plans, manifest, each results file, the evidence listing and the scoring "
        "code -> its hash when verify began"
    )
    trials: int
    failed_trials: int
    all_rederived: bool
    publishable: bool
    problems: list[str] = Field(description="why not publishable; empty when it is")


class ImportRecord(Model):
    """What `evalkit import` leaves in a results folder it wrote from another tool's log: the
    folder's label. Its rows were neither run nor kept by evalkit, so nothing re-derives them
    and `verify`, `report` and `gate` read the folder as never publishable."""

    schema_version: int = SCHEMA_VERSION
    format: Literal["inspect"]
    source: str = Field(description="the log's file name, as given")
    source_sha256: str
    imported_at: str
    evalkit_version: str
    model: str
    task: str = Field("", description="the log's own task name")
    eval_id: str = ""
    polarity_key: str = Field(description="the sample metadata key the polarities were read from")
    polarities: dict[str, Literal["positive", "negative"]] = Field(
        default_factory=dict, description="scenario -> its polarity, as the log's samples said"
    )

"""What `report` and `compare` need of each manifest line, read without the rest of it.

A full manifest line is about 2.8 KB, most of it the bundle's declarations (the same for
every rep of a bundle) and the kept files' names and hashes (which only `verify`, `merge`
and the page read). Parsed whole, a 100,000-rep manifest is most of what `report` holds.
A summary keeps the rep's key, verdict, retry fields and usage; its declarations are parsed
whole once per bundle id and suite, and every other line of that bundle shares that dict.
Each line's own suite is still read (a line declaring another suite is kept apart), so
what a report checks of the folder's suites is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import ConfigDict, Field, ValidationError

from evalkit.models.base import Model, VerdictValue
from evalkit.records.folder.jsonl import json_lines
from evalkit.records.folder.regular import check_record


class ManifestFacts(Protocol):
    """What every reader of a manifest line's facts uses: a full `EvidenceLine` or a
    `ManifestSummary`."""

    @property
    def run_id(self) -> str: ...
    @property
    def scenario(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def rep(self) -> int: ...
    @property
    def declarations(self) -> dict[str, Any]: ...
    @property
    def bundle_id(self) -> str: ...
    @property
    def results(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def superseded_by(self) -> int | None: ...
    @property
    def supersedes(self) -> int | None: ...
    @property
    def retry_reason(self) -> str: ...
    @property
    def rescore_of(self) -> str: ...
    @property
    def usage(self) -> Mapping[str, int | float]: ...


@dataclass(slots=True)
class ManifestSummary:
    """One manifest line as a report reads it."""

    run_id: str
    scenario: str
    model: str
    rep: int
    declarations: dict[str, Any]
    """shared by every line of the same bundle id and suite"""
    bundle_id: str
    verdict: str
    results: str
    attempt: int
    superseded_by: int | None
    retry_reason: str
    rescore_of: str
    usage: dict[str, int | float]
    supersedes: int | None = None


class _Suite(Model):
    model_config = ConfigDict(defer_build=True, extra="ignore")

    suite: Any = None


class _Line(Model):
    """The fields a summary keeps, checked as `EvidenceLine` checks them; the rest of the
    line is skipped, not built."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    schema_version: int = 0
    run_id: str
    scenario: str
    model: str
    rep: int
    evidence: str
    files: dict[str, str]
    file_hashes: dict[str, str] = Field(default_factory=dict)
    declarations: _Suite
    bundle_id: str
    verdict: VerdictValue
    results: str = ""
    attempt: int = 1
    superseded_by: int | None = None
    supersedes: int | None = None
    retry_reason: str = ""
    rescore_of: str = ""
    usage: dict[str, int | float] = Field(default_factory=dict)


def read_summaries(path: Path) -> tuple[list[ManifestSummary], list[str]]:
    """Every line that reads, as a summary, and one problem per line that does not (the
    same lines `Workdir.read_evidence_index` would name)."""
    found: list[ManifestSummary] = []
    problems: list[str] = []
    declared: dict[tuple[str, str], dict[str, Any]] = {}
    same: dict[str, str] = {}
    number = 0
    check_record(path)
    with path.open("rb") as stream:  # line by line: a 100,000-rep manifest is 280 MB
        for text in json_lines(stream):
            number += 1
            if not text.strip():
                continue
            try:
                line = _Line.model_validate_json(text)
                key = (line.bundle_id, json.dumps(line.declarations.suite, default=str))
                if key not in declared:
                    whole = json.loads(text)["declarations"]
                    if not isinstance(whole, dict):
                        raise TypeError("declarations")
                    declared[key] = whole
            except (ValidationError, TypeError, ValueError):
                problems.append(f"{path.name}:{number}: unreadable manifest line")
                continue
            found.append(
                ManifestSummary(
                    run_id=same.setdefault(line.run_id, line.run_id),
                    scenario=same.setdefault(line.scenario, line.scenario),
                    model=same.setdefault(line.model, line.model),
                    rep=line.rep,
                    declarations=declared[key],
                    bundle_id=same.setdefault(line.bundle_id, line.bundle_id),
                    verdict=line.verdict,
                    results=same.setdefault(line.results, line.results),
                    attempt=line.attempt,
                    superseded_by=line.superseded_by,
                    retry_reason=line.retry_reason,
                    rescore_of=line.rescore_of,
                    usage=line.usage,
                    supersedes=line.supersedes,
                )
            )
    return found, problems

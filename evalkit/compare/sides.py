"""The two sides of a comparison: which rows each holds, and what each was run against.

A side is a results folder, optionally narrowed to one variant, model or run id. What it
was run against (its factors) comes from each row's declarations in the manifest, so two
sides can be told apart by subject, model, instrument or CLI version, and a comparison that
changed more than one of them can be refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import ConfigError, NotFoundError
from evalkit.models import ResultRow
from evalkit.records.folder.results import read_rows
from evalkit.records.folder.scenario_rows import with_scenarios as with_scenarios
from evalkit.records.folder.workdir import RESULTS, Workdir
from evalkit.records.rows.agent import agent_of
from evalkit.records.rows.backend import backend_of
from evalkit.records.rows.judge import judge_of
from evalkit.records.rows.subject import UNKNOWN, subject_hash_of, variant_of
from evalkit.records.verify.counts import counted_rows
from evalkit.scoring.hashing import sha256_bytes

if TYPE_CHECKING:
    pass

SELECTOR_KINDS = ("variant", "model", "run", "judge", "cli", "agent")
FACTORS = (
    "subject", "model", "instrument", "agent", "backend", "neighbours", "cli_version", "judge",
)  # fmt: skip
NO_NEIGHBOURS = "none"
# Declarations that are the instrument: what decides a verdict and must not move between sides.
_INSTRUMENT_KEYS = (
    "fixture_hashes",
    "rubric_sha256",
    "rubrics_sha256",
    "checker",
    "checker_source",
)


@dataclass
class Side:
    """The rows of one side and the distinct values of each factor across them."""

    label: str
    workdir: Path
    selector: str
    rows: list[ResultRow]
    declarations: dict[str, dict[str, Any]] = field(default_factory=dict)
    baseline: bool = False
    """The suite's recorded baseline (see `evalkit.compare.baseline`)."""

    def decl(self, row: ResultRow) -> dict[str, Any]:
        return self.declarations.get(row.bundle_id, {})

    def variant(self, row: ResultRow) -> str:
        return variant_of(row, self.decl(row))

    def subject_hash(self, row: ResultRow) -> str:
        return subject_hash_of(row, self.decl(row)) or UNKNOWN

    def agent(self, row: ResultRow) -> str:
        """The agent CLI that ran a row, from its bundle (Claude Code's rows declare none)."""
        return agent_of(self.decl(row))

    def backend(self, row: ResultRow) -> str:
        """The OS sandbox a row ran in (`none` unconfined), from its bundle."""
        return backend_of(self.decl(row))

    def neighbours(self, row: ResultRow) -> str:
        """The plugins a row's bundle loaded beside the subject, by name and tree hash
        (`none`: it loaded none, or was recorded before neighbours)."""
        found = self.decl(row).get("neighbours")
        if not isinstance(found, dict) or not found:
            return NO_NEIGHBOURS
        return ",".join(f"{name}@{str(h)[:19]}" for name, h in sorted(found.items()))

    def factor_values(self) -> dict[str, set[str]]:
        values: dict[str, set[str]] = {name: set() for name in FACTORS}
        for row in self.rows:
            decl = self.decl(row)
            values["subject"].add(f"{self.variant(row)} {self.subject_hash(row)}")
            values["model"].add(row.model)
            instrument = {k: decl.get(k) for k in _INSTRUMENT_KEYS}
            canonical = json.dumps(instrument, sort_keys=True).encode()
            values["instrument"].add("sha256:" + sha256_bytes(canonical) if decl else "unknown")
            values["cli_version"].add(row.cli_version or "unknown")
            values["judge"].add(judge_of(decl))
            values["agent"].add(self.agent(row))
            values["backend"].add(self.backend(row))
            values["neighbours"].add(self.neighbours(row))
        return values

    def scenario_hashes(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for row in self.rows:
            sha = self.decl(row).get("scenario_sha256")
            if sha:
                found.setdefault(row.scenario, set()).add(str(sha))
        return found


def parse_selector(text: str) -> tuple[str, str]:
    kind, _, value = text.partition(":")
    if kind not in SELECTOR_KINDS or not value:
        raise ConfigError(
            f"selector '{text}': expected variant:NAME, model:NAME, run:ID, judge:IDENTITY, "
            "cli:VERSION or agent:NAME"
        )
    return kind, value


def read_workdir(workdir: Path) -> tuple[list[ResultRow], dict[str, dict[str, Any]]]:
    """Every row of a results folder that counts (a row a later rescore or resumed run
    replaced is left out, as `report` leaves it), and each bundle id's declarations."""
    workdir = workdir.resolve()
    if not workdir.is_dir():
        raise NotFoundError(f"{workdir}: no such results folder")
    records = Workdir(workdir)
    rows: list[ResultRow] = []
    for path in records.results_files(records.read_plans().items):
        rows += read_rows(path)
    if not rows:
        raise NotFoundError(f"{workdir / RESULTS}: no rows to compare")
    decls: dict[str, dict[str, Any]] = {}
    lines = records.read_manifest_summaries().items if records.has_evidence_index() else []
    for line in lines:
        decls.setdefault(line.bundle_id, line.declarations)
    return counted_rows(rows, lines), decls


def load_side(label: str, workdir: Path, selector: str = "") -> Side:
    rows, decls = read_workdir(workdir)
    side = Side(label, workdir.resolve(), selector, rows, decls)
    if selector:
        kind, value = parse_selector(selector)
        if kind == "model":
            kept = [r for r in rows if r.model == value]
        elif kind == "run":
            kept = [r for r in rows if r.run_id == value]
        elif kind == "judge":
            kept = [r for r in rows if judge_of(side.decl(r)) == value]
        elif kind == "cli":
            kept = [r for r in rows if r.cli_version == value]
        elif kind == "agent":
            kept = [r for r in rows if side.agent(r) == value]
        else:
            kept = [r for r in rows if side.variant(r) == value]
        if not kept:
            raise NotFoundError(f"{workdir}: no rows for {selector}")
        side.rows = kept
    return side


def pooled_subjects(side: Side) -> str | None:
    """Why a side is confounded within itself: its rows ran under more than one subject
    (variant and wording hash), so a rate over them belongs to no one wording. None when
    every row ran under the same one."""
    subjects = sorted(side.factor_values()["subject"])
    if len(subjects) < 2:
        return None
    shown = ", ".join(re.sub(r"(sha256:[0-9a-f]{12})[0-9a-f]+", r"\1", s) for s in subjects)
    return f"{side.label} holds {len(subjects)} subjects ({shown})"


def _pooled(side: Side, factor: str, of: Callable[[ResultRow], str]) -> dict[str, int] | None:
    """Rows by value of a factor a side must not pool; None when one value holds them all."""
    values = sorted(side.factor_values()[factor])
    if len(values) < 2:
        return None
    return {value: sum(1 for r in side.rows if of(r) == value) for value in values}


def pooled_agents(side: Side) -> str | None:
    """Why a side is confounded within itself by agent: its rows were run by more than one
    agent, so a rate over them belongs to no one agent. None when one agent ran them all."""
    counts = _pooled(side, "agent", side.agent)
    if counts is None:
        return None
    shown = ", ".join(f"{agent} {n} row(s)" for agent, n in counts.items())
    return f"{side.label} holds {len(counts)} agents ({shown}); narrow it with agent:NAME"


def pooled_backends(side: Side) -> str | None:
    """Why a side is confounded within itself by confinement: its rows ran in more than one
    OS sandbox (what the agent could reach differs between them). None when one ran them."""
    counts = _pooled(side, "backend", side.backend)
    if counts is None:
        return None
    shown = ", ".join(f"{name} {n} row(s)" for name, n in counts.items())
    return f"{side.label} holds {len(counts)} confinement backends ({shown})"


def other_backends(a: Side, b: Side, differ: list[str], allowed: bool) -> str | None:
    """Sides confined by different backends: refused unless allowed (a macOS author's srt
    folder against a Linux CI baseline is a real need), and named either way."""
    if "backend" not in differ:
        return None
    shown = " and ".join(
        f"{s.label} in {', '.join(sorted(s.factor_values()['backend']))}" for s in (a, b)
    )
    if allowed:
        return f"A and B ran under different confinement ({shown}), allowed by --allow-backends"
    return (
        f"A and B ran under different confinement ({shown}): a difference could be the "
        "sandbox's; pass --allow-backends to compare them anyway"
    )


def other_neighbours(a: Side, b: Side, differ: list[str]) -> str | None:
    """A side whose reps had neighbours against one whose had none: the subject among its
    peers and the subject alone are different measurements, never one factor's effect.
    Two sets of neighbours that differ are a factor like any other. None otherwise."""
    if "neighbours" not in differ:
        return None
    has = [NO_NEIGHBOURS not in s.factor_values()["neighbours"] for s in (a, b)]
    lacks = [s.factor_values()["neighbours"] != {NO_NEIGHBOURS} for s in (a, b)]
    if all(has) and all(lacks):
        return None
    shown = " and ".join(
        f"{s.label} with {', '.join(sorted(s.factor_values()['neighbours']))}" for s in (a, b)
    )
    return (
        f"A and B ran among different neighbours ({shown}): a side whose reps had "
        "neighbours is never compared with one whose reps had none; run both the same way"
    )


def unchosen_agents(a: Side, b: Side, differ: list[str]) -> str | None:
    """Sides run by different agents where neither was chosen with `agent:`: an agent that
    changed between two folders unasked (a grid run with another --agent) is not the factor
    under study until a selector says it is. None otherwise."""
    if "agent" not in differ or any(s.selector.startswith("agent:") for s in (a, b)):
        return None
    shown = " and ".join(
        f"{s.label} by {', '.join(sorted(s.factor_values()['agent']))}" for s in (a, b)
    )
    return (
        f"A and B were run by different agents ({shown}); choose them with --a/--b "
        "agent:NAME to gate one agent against another"
    )


def differing(a: Side, b: Side) -> list[str]:
    """The factors whose values are not the same on both sides, in FACTORS order."""
    va, vb = a.factor_values(), b.factor_values()
    found = [name for name in FACTORS if va[name] != vb[name]]
    if "agent" in found and "cli_version" in found:  # each agent's CLI has its own versions
        found.remove("cli_version")
    ha, hb = a.scenario_hashes(), b.scenario_hashes()
    if "instrument" not in found and any(ha[s] != hb[s] for s in set(ha) & set(hb)):
        found.append("instrument")
    return sorted(found, key=FACTORS.index)


def confounded(differ: list[str]) -> bool:
    """More than one factor differs, or the judge does: a judge is never the factor under
    study, so a difference in it alone already confounds whatever else moved. The backend is
    no factor under study either: `other_backends` refuses or names it on its own."""
    studied = [name for name in differ if name != "backend"]
    return len(studied) > 1 or "judge" in studied


"""One grid spread over many machines: a stable cell order, its I-th of N slices, and one
identity (digest and run id) that every shard derives alike without talking to the others.

The slice is strided (cell k goes to shard k mod N), so every shard gets a mix of scenarios
and models and finishes at about the same time. Schedulers number their tasks from 0; the
usual variables are mapped here, and the one used is named, so a log says where I came from.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.run.grid import GridCell
from evalkit.scoring.hashing import sha256_bytes
from evalkit.suite.config import Suite
from evalkit.suite.subject import Subject, build_subject

INDEX_VARIABLES = (
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "EVALKIT_SHARD_INDEX",
)
"""0-based task indexes: a Kubernetes Indexed Job, a Slurm array (less SLURM_ARRAY_TASK_MIN),
and anything else (a CI matrix) that sets EVALKIT_SHARD_INDEX."""


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based: shard I of N."""
    count: int
    source: str = ""
    """Where the index came from, for `auto`: e.g. JOB_COMPLETION_INDEX=2."""

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`I/N` with 1 <= I <= N, or `auto/N`, which reads a 0-based scheduler index."""
    env = os.environ if environ is None else environ
    match = re.fullmatch(r"\s*(auto|\d+)\s*/\s*(\d+)\s*", text)
    if match is None:
        raise ConfigError(f"--shard {text}: expected I/N (e.g. 2/3) or auto/N")
    count = int(match.group(2))
    if count < 1:
        raise ConfigError(f"--shard {text}: N must be at least 1")
    if match.group(1) != "auto":
        index = int(match.group(1))
        if not 1 <= index <= count:
            raise ConfigError(f"--shard {text}: I must be between 1 and {count}")
        return Shard(index, count)
    for name in INDEX_VARIABLES:
        raw = env.get(name, "").strip()
        if not raw:
            continue
        base = env.get("SLURM_ARRAY_TASK_MIN", "0") if name == "SLURM_ARRAY_TASK_ID" else "0"
        try:
            zero_based = int(raw) - int(base or "0")
        except ValueError:
            raise ConfigError(f"--shard auto/{count}: {name}={raw} is not a number") from None
        if not 0 <= zero_based < count:
            raise ConfigError(
                f"--shard auto/{count}: {name}={raw} gives index {zero_based}, "
                f"outside 0..{count - 1}"
            )
        shown = f"{name}={raw}" + (f" - SLURM_ARRAY_TASK_MIN={base}" if base != "0" else "")
        return Shard(zero_based + 1, count, shown)
    raise ConfigError(
        f"--shard auto/{count}: none of {', '.join(INDEX_VARIABLES)} is set; "
        "give the shard as I/N instead"
    )


def cell_order(cells: list[GridCell]) -> list[GridCell]:
    """Scenario, then model, then rep: the same order on every machine, whatever the order
    the options listed them in."""
    return sorted(cells, key=lambda c: (c.scenario.id, c.model, c.rep, c.variant))


def slice_cells(cells: list[GridCell], shard: Shard) -> list[GridCell]:
    return cell_order(cells)[shard.index - 1 :: shard.count]


def subject_hashes(
    suite: Suite, cells: list[GridCell], own: Subject, plugins: list[Path] | None
) -> dict[str, str]:
    """The hash of the subject each variant of the cells runs with ("" for the run's own),
    built as the grid builds it: with the same `--plugin` copies."""
    return {
        v: build_subject(suite, plugins, v).hash if v else own.hash
        for v in sorted({c.variant for c in cells})
    }


def grid_digest(
    suite: Suite,
    cells: list[GridCell],
    settings: Mapping[str, object],
    subjects: Mapping[str, str] | None = None,
) -> str:
    """What makes two shards parts of one grid: its cells (with each scenario's hash), the
    instrument's frozen hashes, the subject each variant runs with (so shards run with
    different `--plugin` checkouts are never one grid) and the settings that change what a
    rep does."""
    payload = {
        "subjects": dict(subjects or {}),
        "cells": [
            [c.scenario.id, c.scenario.sha256, c.model, c.rep, *([c.variant] if c.variant else [])]
            for c in cell_order(cells)
        ],
        "instrument": {
            "suite": suite.name,
            "fixtures": suite.fixture_hashes(),
            "plugins": suite.plugin_hashes(),
            "rubric": sha256_bytes(suite.rubric_path.read_bytes())
            if suite.rubric_path.is_file()
            else "",
            "checker": f"{suite.checker.name}@{suite.checker.version}",
            "checker_source": suite.checker.source_hash(),
        },
        "settings": dict(settings),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return "grid-" + sha256_bytes(canonical)[:16]


def shard_run_id(digest: str) -> str:
    """The run id every shard of one grid shares when none is given."""
    return "r" + digest.removeprefix("grid-")[:12]

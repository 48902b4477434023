"""A tune taken up again from its lineage after an interrupt: the same tune id, the same
incumbent, the rounds already decided kept, the interrupted round's variant reused rather
than proposed again, and each grid it had begun resumed (`grid --resume`).

`tune.jsonl` opens with the tune's settings; a WORKDIR holding a finished tune, or one
started with other settings, is refused rather than mixed with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from evalkit.compare.sides import read_workdir
from evalkit.errors import RefusedError
from evalkit.models import ResultRow
from evalkit.records.folder.results import read_rows
from evalkit.records.rows.policy_models import is_policy
from evalkit.suite.config import Suite
from evalkit.suite.lock import read_lock
from evalkit.tune.lineage import LINEAGE, RoundLine
from evalkit.tune.plan import TuneRequest

SETTINGS = ("models", "reps", "margin", "min_delta", "alpha", "controls", "paths", "proposer")
"""What a resumed tune must share with the interrupted one (`proposer`: `--proposer` as
given, None for a command or the default)."""


@dataclass
class Taken:
    """What the lineage says was done before the interrupt."""

    tune_id: str
    rounds: list[RoundLine] = field(default_factory=list)
    spent: int = 0
    spent_usd: float = 0.0


def settings(request: TuneRequest, paths: list[str]) -> dict[str, Any]:
    found = {name: getattr(request, name) for name in SETTINGS if name != "paths"}
    return {**found, "paths": paths}


def start_line(tune_id: str, request: TuneRequest, paths: list[str]) -> dict[str, Any]:
    return {"kind": "start", "tune": tune_id, **settings(request, paths)}


def taken(work: Path, request: TuneRequest, paths: list[str]) -> Taken | None:
    """The tune WORKDIR holds, to take up again; None when it holds none."""
    path = work / LINEAGE
    if not path.is_file():
        return None
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    start = next((x for x in lines if x.get("kind") == "start"), None)
    if start is None:
        raise RefusedError(f"{path}: holds no start line; name a new WORKDIR")
    done = [x for x in lines if x.get("kind") in ("reserve", "stop")]
    if done:
        raise RefusedError(f"{work}: holds a finished tune ({start['tune']}); name a new WORKDIR")
    now = settings(request, paths)
    moved = [k for k in SETTINGS if start.get(k) != now[k]]
    if moved:
        raise RefusedError(
            f"{work}: tune {start['tune']} ran with other {', '.join(moved)}; resume it with "
            "the same settings, or name a new WORKDIR"
        )
    names = {f.name for f in fields(RoundLine)}
    rounds = [RoundLine(**{k: v for k, v in x.items() if k in names})
              for x in lines if x.get("kind") == "round"]  # fmt: skip
    rows = [r for p in sorted(work.glob("*/results.tsv")) for r in read_rows(p)]
    proposed = [x for x in lines if x.get("kind") == "proposer"]
    spent = len(rows) + sum(int(x.get("reps") or 0) for x in proposed)
    usd = sum(spent_on(rows)) + sum(float(x.get("cost_usd") or 0.0) for x in proposed)
    return Taken(start["tune"], rounds, spent, usd)


def spent_on(rows: list[ResultRow]) -> list[float]:
    """What each row cost: the CLI's report for a real model, nothing for a scripted one (its
    CLI prices the scripted tokens as if they were a real model's). One reading for the
    running budget and for a resumed one, so `--budget-usd` holds across an interrupt."""
    return [r.cost_usd_estimate or 0.0 for r in rows if not is_policy(r.model)]


def contaminated_by(suite: Suite, tune_id: str, which: str) -> bool:
    """Whether the lock already records `which` contaminated by this tune."""
    lock = read_lock(suite)
    entries = lock.contaminated.get(which, []) if lock is not None else []
    return any(tune_id in e.note for e in entries)


def round_variant(suite: Suite, tune_id: str, number: int) -> str | None:
    """The variant an interrupted round had already written, to measure rather than propose
    again."""
    mark = f"{tune_id} round {number},"
    found = [n for n, v in suite.config.variants.items() if v.description.startswith(mark)]
    return found[0] if found else None


def counted(folder: Path) -> list[ResultRow]:
    """The rows of one of the tune's grids that count, as `compare` counts them: a rep the
    interrupt cut short and `grid --resume` ran again counts once, by its resumed attempt, so
    a resumed tune's brief and inner loop read what an uninterrupted one would."""
    return read_workdir(folder)[0]

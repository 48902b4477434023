"""`evalkit export --format inspect`: a results folder as an Inspect AI `.eval` log.

Written through Inspect AI's own log API, so the Inspect viewer and `inspect log` read it as
one of their own. One sample per rep: its id the scenario, its epoch the rep number (each
scenario's rows numbered 1.. in run order instead when a folder holds one rep number twice,
several runs or variants, the run id and rep kept in the metadata either way). The verdict,
both axes, the reasons and the flags are scores; an ERROR row is an errored sample, never a
score of 0, so nothing reading the log counts a crash as the agent's failure.

A log is made to be shared, so it holds no Task: the sample's input is a placeholder naming
the scenario, and every message went through the HTML report's Task mask. Its header names
the suite, the lock and how far the folder can be trusted (the publishability `report`
prints); a folder that is not PUBLISHABLE says so there and in its tags.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import __version__
from evalkit.errors import ConfigError, EvalkitError, RefusedError
from evalkit.exports.inspect_messages import (
    Step,
    chat_messages,
    masked,
    require_inspect,
    transcript_steps,
)
from evalkit.exports.rows import evidence_lines, read_rows
from evalkit.exports.target import check_export_target
from evalkit.models import EvidenceLine, ResultRow, ScenarioFile
from evalkit.outpaths import make_folder
from evalkit.records.folder.confined import OutsideFolderError, confined
from evalkit.records.folder.imported import is_imported
from evalkit.records.folder.keep import TRANSCRIPT
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.build import build_report
from evalkit.records.report.factors import bundle_declarations
from evalkit.records.report.model import Publishability
from evalkit.records.rows.agent import agent_of
from evalkit.records.rows.subject import subject_hash_of, variant_of
from evalkit.scoring.hashing import sha256_bytes
from evalkit.suite.config import Suite
from evalkit.suite.lock import lock_path, lock_state, read_lock
from evalkit.suite.task import TaskMask, task_mask

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

SUFFIX = ".eval"


def placeholder(scenario: str) -> str:
    """A sample's input: the scenario named, its Task held out."""
    return f"evalkit scenario {scenario} (its Task is held out and not in this log)"


@dataclass
class InspectExport:
    """What the command says of a written log."""

    out: Path
    samples: int
    errored: int
    publishable: bool
    verdict: str


@dataclass
class _Folder:
    records: Workdir
    rows: list[ResultRow]
    lines: dict[tuple[str, str, str, int, int], EvidenceLine]
    decls: dict[str, dict[str, Any]]


def write_inspect_log(suite: Suite, folder: Path, out: Path) -> InspectExport:
    """Write FOLDER's rows as an Inspect AI log to OUT (replaced whole): refused when OUT is
    not an `.eval` path or lands on or in what evalkit reads, and when the folder holds more
    than one model (an Inspect log is one model's)."""
    require_inspect()
    from inspect_ai.log import write_eval_log

    read = _read(suite, folder)
    check_out(suite, read.records.root, out)
    models = sorted({row.model for row in read.rows})
    if len(models) > 1:
        raise RefusedError(
            f"{read.records.root}: holds {len(models)} models ({', '.join(models)}); an Inspect "
            "log is one model's: export a folder of one model"
        )
    trust = build_report(suite, read.records.root).publishability
    log = _log(suite, read, models[0], trust)
    make_folder(out.parent, out)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        write_eval_log(log, str(partial), format="eval")
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    samples = log.samples or []
    return InspectExport(
        out=out,
        samples=len(samples),
        errored=sum(1 for s in samples if s.error is not None),
        publishable=trust.publishable,
        verdict=_shared(trust.verdict, suite, read.records),
    )


def check_out(suite: Suite, folder: Path, out: Path) -> None:
    """An `.eval` path, never on or inside a record the folder or suite is read from."""
    if out.suffix != SUFFIX:
        raise ConfigError(f"{out}: an Inspect log's name ends in {SUFFIX}")
    check_export_target(suite, folder, out, "log")


def _read(suite: Suite, folder: Path) -> _Folder:
    """The rows `report` counts, with each row's manifest line by rep and attempt; a folder
    recorded for another suite is refused, as `report` refuses it."""
    read = read_rows(folder, evidence_lines, suite=suite)
    by_rep = {(x.run_id, x.scenario, x.model, x.rep, x.attempt): x for x in read.lines}
    return _Folder(read.records, read.rows, by_rep, bundle_declarations(read.lines))


def epochs(rows: list[ResultRow]) -> list[int]:
    """Each row's epoch: its rep number while no scenario holds one twice; else each
    scenario's rows numbered 1.. in run, rep and attempt order."""
    if len(Counter((r.scenario, r.rep) for r in rows)) == len(rows):
        return [r.rep for r in rows]
    order = sorted(range(len(rows)), key=lambda i: (rows[i].run_id, rows[i].rep, rows[i].attempt))
    seen: Counter[str] = Counter()
    found = [0] * len(rows)
    for i in order:
        seen[rows[i].scenario] += 1
        found[i] = seen[rows[i].scenario]
    return found


def _log(suite: Suite, read: _Folder, model: str, trust: Publishability) -> EvalLog:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
    )

    mask = task_mask(suite.scenarios("all"))
    numbers = epochs(read.rows)
    pairs = zip(read.rows, numbers, strict=True)
    samples = [_sample(suite, read, row, epoch, mask) for row, epoch in pairs]
    header = _header(suite, read, trust)
    ids = list(dict.fromkeys(row.scenario for row in read.rows))
    passes = sum(1 for row in read.rows if row.verdict == "PASS")
    rate = EvalMetric(name="pass_rate", value=passes / len(read.rows))
    tags = ["evalkit", "PUBLISHABLE" if trust.publishable else "NOT-PUBLISHABLE"]
    spec = EvalSpec(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        tags=tags,
        task=f"evalkit/{suite.name}",
        run_id=",".join(dict.fromkeys(row.run_id for row in read.rows)),
        dataset=EvalDataset(name=suite.name, samples=len(ids), sample_ids=list(ids)),
        model=model,
        config=EvalConfig(epochs=max(numbers)),
        packages={"heldout-evalkit": __version__},
        metadata=header,
    )
    scored = sum(1 for s in samples if s.error is None)
    verdicts = EvalScore(name="verdict", scorer="evalkit", metrics={"pass_rate": rate})
    results = EvalResults(total_samples=len(samples), completed_samples=scored, scores=[verdicts])
    return EvalLog(
        eval=spec, status="success", samples=samples, results=results, tags=tags, metadata=header
    )


def _header(suite: Suite, read: _Folder, trust: Publishability) -> dict[str, Any]:
    """The suite, the lock and how far the folder can be trusted, under `evalkit`."""
    lock = read_lock(suite)
    path = lock_path(suite)
    declared = sorted({str(d.get("lock")) for d in read.decls.values() if d.get("lock")})
    return {
        "evalkit": {
            "suite": suite.name,
            "results_folder": read.records.root.name,
            "publishable": trust.publishable,
            "verdict": _shared(trust.verdict, suite, read.records),
            "problems": [_shared(p, suite, read.records) for p in trust.problems],
            "verification": trust.verification,
            "verified_at": trust.verified_at,
            "imported": is_imported(read.records.root),
            "lock": {
                "state": lock_state(suite),
                "checker": lock.checker if lock else None,
                "sha256": sha256_bytes(path.read_bytes()) if lock else None,
                "declared_by_rows": declared,
            },
            "evalkit_version": __version__,
            "tasks": "held out: no sample holds a scenario's Task",
        }
    }


def _shared(text: str, suite: Suite, records: Workdir) -> str:
    """text with this machine's folders named as the folder and suite are known by."""
    return text.replace(str(records.root), records.root.name).replace(
        str(suite.root.resolve()), suite.name
    )


def _sample(suite: Suite, read: _Folder, row: ResultRow, epoch: int, mask: TaskMask) -> EvalSample:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelUsage

    line = read.lines.get((row.run_id, row.scenario, row.model, row.rep, row.attempt))
    decl = read.decls.get(row.bundle_id, {})
    steps = _steps(read.records.root, line)
    usage = ModelUsage(
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        total_tokens=row.input_tokens + row.output_tokens,
        input_tokens_cache_read=row.cache_read_tokens,
        input_tokens_cache_write=row.cache_write_tokens,
    )
    error = None
    if row.verdict == "ERROR":
        message = masked(f"ERROR: {_tokens(row.reasons)}", mask)
        error = EvalError(message=message, traceback="", traceback_ansi="")
    return EvalSample(
        id=row.scenario,
        epoch=epoch,
        input=placeholder(row.scenario),
        target="",
        messages=chat_messages(placeholder(row.scenario), steps, mask),
        scores=None if error else _scores(row, mask),
        error=error,
        metadata=_metadata(row, decl, _scenario(suite, row.scenario)),
        model_usage={row.model: usage},
        total_time=row.duration_ms / 1000,
    )


def _steps(root: Path, line: EvidenceLine | None) -> list[Step]:
    """The rep's kept transcript as steps; none when it kept none, or names a path that
    leads outside the folder (never read)."""
    if line is None:
        return []
    try:
        path = confined(root, line.evidence, line.files.get("transcript", TRANSCRIPT))
    except OutsideFolderError:
        return []
    return transcript_steps(path.read_bytes()) if path.is_file() else []


def _tokens(text: str) -> str:
    return "; ".join(t for t in text.split(";") if t and t != "-") or "-"


def _scores(row: ResultRow, mask: TaskMask) -> dict[str, Any]:
    from inspect_ai.scorer import CORRECT, INCORRECT, Score

    reasons = [t for t in row.reasons.split(";") if t and t != "-"]
    flags = [t for t in row.flags.split(";") if t and t != "-"]
    verdict = Score(
        value=CORRECT if row.verdict == "PASS" else INCORRECT,
        answer=row.verdict,
        explanation=masked(_tokens(row.reasons), mask),
        metadata={"reasons": masked(reasons, mask), "flags": masked(flags, mask)},
    )
    return {
        "verdict": verdict,
        "axis_a": Score(value=row.a, answer=row.a),
        "axis_b": Score(value=row.b, answer=row.b),
        "flags": Score(value=masked(";".join(flags) or "-", mask)),
    }


def _scenario(suite: Suite, scenario_id: str) -> ScenarioFile | None:
    try:
        return suite.resolve(scenario_id)
    except EvalkitError:
        return None


def _metadata(row: ResultRow, decl: dict[str, Any], sf: ScenarioFile | None) -> dict[str, Any]:
    """What the row and its bundle say of the rep, ids and versions only."""
    found: dict[str, Any] = {"scenario": row.scenario}
    if sf is not None:
        scenario = sf.scenario
        found |= {
            "polarity": scenario.polarity,
            "set": scenario.set,
            "level": scenario.level,
            "kind": scenario.kind,
        }
    found |= {
        "variant": variant_of(row, decl),
        "subject_hash": subject_hash_of(row, decl),
        "model": row.model,
        "model_id": row.model_id,
        "agent": agent_of(decl),
        "cli_version": row.cli_version,
        "bundle_id": row.bundle_id,
        "run_id": row.run_id,
        "rep": row.rep,
        "attempt": row.attempt,
        "evalkit_version": row.evalkit_version,
        "verdict": row.verdict,
    }
    return {key: value for key, value in found.items() if value not in (None, "")}

"""`evalkit import inspect`: an Inspect AI log read into a results folder labelled imported.

Each sample becomes one row: its id the scenario, its epoch the rep, its polarity read from
the sample metadata key the user names (a polarity the suite states otherwise is refused,
not overridden), PASS or FAIL from its `verdict` score (or its only score), ERROR when the
sample errored. One log is one model's. The folder holds a plan, the rows and the label
(`records/folder/imported.py`), and no evidence: evalkit ran none of the reps, so `report`
and `compare` read it while `verify` and `report` call it NOT PUBLISHABLE, `imported`, and
`gate` refuses it. Its files and folder are left read-only: nothing is to be run into it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit import __version__
from evalkit.errors import ConfigError, EvalkitError, NotFoundError, RefusedError
from evalkit.exports.inspect_messages import require_inspect
from evalkit.models import ImportRecord, PlanCell, ResultRow, is_name
from evalkit.outpaths import make_folder
from evalkit.records.folder.imported import IMPORTED_REASON, label_path
from evalkit.records.folder.plans import write_plan
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import RESULTS, Workdir
from evalkit.suite.config import Suite

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

Polarity = Literal["positive", "negative"]
POLARITIES: tuple[Polarity, ...] = ("positive", "negative")
SCORE = "verdict"
"""The score an evalkit export names the verdict; a log with one score has it under any name."""
READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass
class Imported:
    """What the command says of the folder it wrote."""

    out: Path
    rows: int
    errors: int
    model: str
    scenarios: int


@dataclass(frozen=True)
class _Sample:
    scenario: str
    rep: int
    polarity: Polarity
    row: ResultRow


def import_inspect_log(suite: Suite, log_path: Path, polarity_key: str, out: Path) -> Imported:
    """Read LOG and write it to OUT, a folder that must not exist yet, whole or not at all."""
    require_inspect()
    if out.exists() or out.is_symlink():
        raise RefusedError(f"{out}: exists; an imported folder is written new, never into another")
    log = _read_log(log_path)
    model = _one_model(log_path, log)
    data = log_path.read_bytes()
    run_id = "imported-" + hashlib.sha256(data).hexdigest()[:12]
    samples = [
        _sample(suite, log_path, s, polarity_key, model, run_id, log) for s in log.samples or []
    ]
    if not samples:
        raise NotFoundError(f"{log_path}: holds no samples to import")
    seen: set[tuple[str, int]] = set()
    for found in samples:
        if (found.scenario, found.rep) in seen:
            raise ConfigError(f"{log_path}: sample {found.scenario} epoch {found.rep} twice")
        seen.add((found.scenario, found.rep))
    label = ImportRecord(
        format="inspect",
        source=log_path.name,
        source_sha256="sha256:" + hashlib.sha256(data).hexdigest(),
        imported_at=_now(),
        evalkit_version=__version__,
        model=model,
        task=log.eval.task,
        eval_id=log.eval.eval_id,
        polarity_key=polarity_key,
        polarities={s.scenario: s.polarity for s in samples},
    )
    _write_folder(suite, out, run_id, log_path.name, samples, label)
    errors = sum(1 for s in samples if s.row.verdict == "ERROR")
    return Imported(out, len(samples), errors, model, len(label.polarities))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _read_log(path: Path) -> EvalLog:
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise NotFoundError(f"{path}: no such Inspect log")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # Inspect's own readers raise whatever the bytes lead to
        raise ConfigError(
            f"{path}: does not read as an Inspect log ({type(exc).__name__})"
        ) from None


def _one_model(path: Path, log: EvalLog) -> str:
    """The log's one model: its eval's, and every sample's that names one."""
    named = {log.eval.model} | {
        str(s.metadata["model"]) for s in log.samples or [] if s.metadata.get("model")
    }
    if len(named) != 1 or not log.eval.model:
        shown = ", ".join(sorted(n for n in named if n)) or "none"
        raise RefusedError(f"{path}: names {len(named)} models ({shown}); import one model's log")
    return log.eval.model


def _sample(
    suite: Suite, path: Path, sample: EvalSample, key: str, model: str, run_id: str, log: EvalLog
) -> _Sample:
    scenario, rep = str(sample.id), sample.epoch
    where = f"{path}: sample {scenario} epoch {rep}"
    if not is_name(scenario) or rep < 1:
        raise ConfigError(f"{path}: sample id {scenario!r} epoch {rep} is no scenario id and rep")
    polarity = _polarity(where, sample.metadata, key)
    _check_suite_polarity(suite, where, scenario, polarity)
    verdict, reasons, flags = _verdict(where, sample)
    meta = sample.metadata
    row = ResultRow(
        scenario=scenario,
        model=model,
        a=_axis(sample, "axis_a", "A:", verdict),
        b=_axis(sample, "axis_b", "B:", verdict),
        verdict=verdict,
        reasons=";".join(dict.fromkeys(reasons + flags)),
        flags=";".join(flags),
        rep=rep,
        run_id=run_id,
        time=str(sample.completed_at or log.eval.created),
        evalkit_version=__version__,
        cli_version=_text(meta.get("cli_version")),
        model_id=_text(meta.get("model_id")),
        duration_ms=int((sample.total_time or 0) * 1000),
        variant=_variant(meta.get("variant")),
        subject_hash=_subject(meta.get("subject_hash")),
    )
    return _Sample(scenario, rep, polarity, row)


def _polarity(where: str, metadata: dict[str, Any], key: str) -> Polarity:
    if key not in metadata:
        raise ConfigError(f"{where}: no metadata key {key!r} to read its polarity from")
    value = str(metadata[key]).strip().lower()
    for polarity in POLARITIES:
        if value == polarity:
            return polarity
    raise ConfigError(f"{where}: metadata {key!r} is {value!r}, neither positive nor negative")


def _check_suite_polarity(suite: Suite, where: str, scenario: str, polarity: Polarity) -> None:
    """A scenario the suite holds keeps the suite's polarity: a log saying otherwise is refused."""
    try:
        stated = suite.resolve(scenario).scenario.polarity
    except EvalkitError:
        return
    if stated != polarity:
        raise RefusedError(f"{where}: the log says {polarity}, the suite's scenario {stated}")


def _verdict(where: str, sample: EvalSample) -> tuple[Any, list[str], list[str]]:
    """(PASS, FAIL or ERROR, reasons, flags): every row says it was imported."""
    from inspect_ai.scorer import value_to_float

    if sample.error is not None:
        return "ERROR", ["sample-error"], [IMPORTED_REASON]
    scores = sample.scores or {}
    if SCORE in scores:
        score = scores[SCORE]
    elif len(scores) == 1:
        score = next(iter(scores.values()))
    else:
        raise ConfigError(
            f"{where}: {len(scores)} scores and none named {SCORE!r}; nothing to read"
        )
    value = value_to_float()(score.value)
    if value not in (0.0, 1.0):
        raise ConfigError(f"{where}: score {score.value!r} is neither a pass nor a fail")
    meta = score.metadata or {}
    reasons = [t for t in map(_text, _listed(meta.get("reasons"))) if t]
    flags = [t for t in map(_text, _listed(meta.get("flags"))) if t and t != IMPORTED_REASON]
    return ("PASS" if value == 1.0 else "FAIL"), reasons, [IMPORTED_REASON, *flags]


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _text(value: Any) -> str:
    """A value fit for one TSV cell or one reason: no separators, no blanks inside."""
    return re.sub(r"[\s;]+", "-", str(value)).strip("-") if value not in (None, "") else ""


def _axis(sample: EvalSample, name: str, prefix: str, verdict: str) -> str:
    """An evalkit export's axis as it was; an errored sample's an ERROR, as evalkit's own
    ERROR rows have them; `n/a` for a log that never had one."""
    if verdict == "ERROR":
        return f"{prefix}ERROR"
    score = (sample.scores or {}).get(name)
    value = _text(score.value) if score is not None else ""
    return value if value.startswith(prefix) else f"{prefix}n/a"


def _variant(value: Any) -> str:
    return str(value) if isinstance(value, str) and is_name(value) else ""


def _subject(value: Any) -> str:
    return value if isinstance(value, str) and _HASH.match(value) else ""


def _write_folder(
    suite: Suite, out: Path, run_id: str, source: str, samples: list[_Sample], label: ImportRecord
) -> None:
    """The plan, the rows and the label, written beside OUT, left read-only and renamed."""
    make_folder(out.parent, out)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
        records = Workdir(partial)
        reps: dict[str, list[int]] = {}
        for found in samples:
            reps.setdefault(found.scenario, []).append(found.rep)
        cells = [
            PlanCell(scenario=s, model=label.model, reps=len(n), rep_numbers=sorted(n))
            for s, n in reps.items()
        ]
        write_plan(
            records, run_id, f"import inspect {source}", cells, results=RESULTS, suite=suite.name
        )
        for found in samples:
            append_row(records.results, found.row)
        label_path(partial).write_text(label.model_dump_json(indent=2) + "\n", encoding="utf-8")
        for path in partial.iterdir():
            path.chmod(READ_ONLY)
        os.rename(partial, out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    out.chmod(READ_ONLY | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

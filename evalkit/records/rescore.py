"""`evalkit results rescore`: reps scored by older scoring code, scored again beside their old rows.

Nothing is rewritten. Each rep whose declarations name a scoring hash other than the
current one gets a new run id, a plan, a new evidence folder (the kept transcript, diffs
and judge answer, copied, with a new check.json), a manifest line naming the run it
re-scores (`rescore_of`) and a new row appended to the same results file. `report` and
`verify` then count the new row and keep the old one as history. A rep whose evidence
was edited, or whose fixture or scenario changed since, is not re-scored: it is named.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit import __version__
from evalkit.errors import EvalkitError
from evalkit.models import EvidenceLine, PlanCell, ResultRow
from evalkit.records.folder.keep import carry_files, keep_attempt
from evalkit.records.folder.plans import write_plan
from evalkit.records.folder.results import (
    append_row,
    check_results_file,
    read_results,
    row_from_verdict,
)
from evalkit.records.folder.run_ids import new_run_id
from evalkit.records.folder.workdir import RepKey, Workdir, evidence_key
from evalkit.records.kept.evidence import assert_secret_free
from evalkit.records.verify.counts import final_lines, rescored_keys
from evalkit.records.verify.replay import (
    Kept,
    edited_files,
    read_evidence,
    read_kept,
    replay_decide,
    scored_by_older_code,
    scoring_hash,
)
from evalkit.records.verify.result import Trial
from evalkit.suite.config import Suite


@dataclass
class Rescored:
    run_ids: list[str] = field(default_factory=list)
    rescored: list[str] = field(default_factory=list)
    """`<old run> <scenario> <model> rep-k: OLD -> NEW` per re-scored rep"""
    refused: list[str] = field(default_factory=list)
    """reps not re-scored, and why"""


def _row_of(records: Workdir, results: str) -> dict[RepKey, ResultRow]:
    found: dict[RepKey, ResultRow] = {}
    for _, row in read_results(records.path(results or "results.tsv")).rows:
        found.setdefault((row.run_id, row.scenario, row.model, row.rep), row)
    return found


def rescored_declarations(suite: Suite, old: dict[str, Any]) -> dict[str, Any]:
    """What the rep declared, with only what a re-score changes replaced: the scoring code
    (and the checker version it carries), the lock state and the evalkit that scored it. The
    run, variant, subject, judge, limits and flags stay the rep's own, so `verify` replays it
    as it ran."""
    decl = {
        **old,
        "checker": f"{suite.checker.name}@{suite.checker.version}",
        "checker_source": scoring_hash(suite),
        "lock": suite.lock_state,
        "evalkit_version": __version__,
    }
    assert_secret_free(decl)
    return decl


def rescore_workdir(suite: Suite, records: Workdir) -> Rescored:
    """Score every rep recorded by older scoring code again, under the folder's grid lock."""
    done = Rescored()
    with records.hold_grid("rescore"):
        lines = records.read_evidence_index().items
        current = scoring_hash(suite)
        replaced = rescored_keys(lines)
        todo = [
            x
            for x in final_lines(lines)
            if scored_by_older_code(x, current) and evidence_key(x) not in replaced
        ]
        groups: dict[str, list[EvidenceLine]] = defaultdict(list)
        for line in todo:
            groups[line.results].append(line)
        for results, group in groups.items():
            _rescore_group(suite, records, results, group, done)
    return done


def _rescore_group(
    suite: Suite, records: Workdir, results: str, group: list[EvidenceLine], done: Rescored
) -> None:
    results_path = records.path(results or "results.tsv")
    check_results_file(results_path)
    rows = _row_of(records, results)
    ready = _ready(suite, records, group, rows, done)
    if not ready:
        return
    run_id = new_run_id()
    cells: dict[tuple[str, str], list[int]] = defaultdict(list)
    for line, _ in ready:
        cells[(line.scenario, line.model)].append(line.rep)
    write_plan(
        records,
        run_id,
        f"rescore {records.root} (scoring code {scoring_hash(suite)[:19]})",
        [
            PlanCell(scenario=s, model=m, reps=len(reps), rep_numbers=sorted(reps))
            for (s, m), reps in cells.items()
        ],
        results=results,
        suite=suite.name,
    )
    done.run_ids.append(run_id)
    for line, kept in ready:
        _rescore_one(suite, records, run_id, line, kept, rows, results_path, done)


def _ready(
    suite: Suite,
    records: Workdir,
    group: list[EvidenceLine],
    rows: dict[RepKey, ResultRow],
    done: Rescored,
) -> list[tuple[EvidenceLine, Kept]]:
    """The reps whose evidence reads whole and unedited and whose row is there; each other
    is refused, with why."""
    ready = []
    for line in group:
        name = f"{line.run_id} {line.scenario} {line.model} rep-{line.rep}"
        trial = Trial(name)
        read = read_evidence(records.root, line)
        kept = read_kept(suite, records.root, line, trial, read)
        trial.problems += edited_files(line, read)
        if evidence_key(line) not in rows:
            trial.problems.append("no TSV row")
        if kept is None or trial.problems:
            done.refused.append(f"{name}: {'; '.join(trial.problems)}")
            continue
        ready.append((line, kept))
    return ready


def _rescore_one(
    suite: Suite,
    records: Workdir,
    run_id: str,
    line: EvidenceLine,
    kept: Kept,
    rows: dict[RepKey, ResultRow],
    results_path: Path,
    done: Rescored,
) -> None:
    """One rep scored again: its evidence kept anew under RUN_ID, then its new row."""
    name = f"{line.run_id} {line.scenario} {line.model} rep-{line.rep}"
    try:
        verdict = replay_decide(suite, records.root, line, kept)
    except (EvalkitError, KeyError, OSError) as exc:
        done.refused.append(f"{name}: {str(exc).splitlines()[0][:160]}")
        return
    folder = records.claim_evidence_folder(
        run_id, line.scenario, line.model, line.rep, line.attempt
    )
    kept_files = {r: rel for r, rel in line.files.items() if r not in ("check", "judge")}
    new = keep_attempt(
        records,
        folder,
        carry_files(records.path(line.evidence), folder, kept_files),
        verdict,
        rescored_declarations(suite, line.declarations),
        run_id=run_id,
        scenario=line.scenario,
        model=line.model,
        rep=line.rep,
        attempt=line.attempt,
        results=line.results,
        usage=line.usage,
        rescore_of=line.run_id,
    )
    records.append_evidence_line(new)
    fresh = row_from_verdict(verdict, bundle_id=new.bundle_id, attempt=line.attempt)
    decided = ("a", "b", "verdict", "reasons", "flags", "bundle_id", "attempt")
    row = rows[evidence_key(line)].model_copy(
        update={
            **{k: getattr(fresh, k) for k in decided},
            "run_id": run_id,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
            "evalkit_version": __version__,
        }
    )
    append_row(results_path, row)
    was = rows[evidence_key(line)]
    done.rescored.append(f"{name}: {was.verdict} -> {verdict.verdict}")

"""`evalkit verify`: re-derive every recorded row from the evidence kept beside it.

For each manifest line the sandbox is rebuilt from the pinned fixture plus the kept
diffs, in a replay folder that is its own git top level; the kept transcript is
re-scored with the kept judge answer replayed; and the verdict is held against
check.json and the TSV row. Then rows, manifest lines and plans are counted. Nothing
of one rep's re-derivation is reused for another but what no rep's evidence can change:
the fixtures, the kept subject, and the folders reset between reps.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.forked import forked_map
from evalkit.models import EvidenceLine
from evalkit.records.folder.workdir import Workdir, evidence_key
from evalkit.records.verify.counts import (
    count_reps,
    final_lines,
    rescored_keys,
    rows_by_rep,
)
from evalkit.records.verify.replay import (
    ReplayBaselines,
    scoring_hash,
    verify_trial,
)
from evalkit.records.verify.result import Trial, VerifyReport
from evalkit.records.verify.verdict import (
    calibration_verdict,
    judge_publishability,
    planned_versions,
)
from evalkit.suite.config import Suite

REPLAYS_AT_ONCE = 3
"""Trials replayed at once, each in a worker process: a worker waits on git part of the
time, so there is one more than the two cores this was measured on."""


def verify_workdir(suite: Suite, workdir: Path) -> VerifyReport:
    records = Workdir(workdir)
    index = records.read_evidence_index()
    plans = records.read_plans()
    lines = index.items
    rows = rows_by_rep(records, records.results_files(plans.items, lines))
    report = VerifyReport(unreadable=plans.problems + index.problems + rows.problems)
    current = scoring_hash(suite)
    replaced = rescored_keys(lines)
    baselines = ReplayBaselines()

    resumed = {(*evidence_key(x), x.supersedes): x for x in lines if x.supersedes is not None}

    def one(line: EvidenceLine) -> Trial:
        found = rows.by_key.get(evidence_key(line), [])
        if len(found) > 1:  # an interrupted attempt's row and the resumed run's
            found = [r for r in found if r.attempt == line.attempt]
        trial = verify_trial(suite, workdir, line, found, current, baselines)
        trial.rescored = evidence_key(line) in replaced
        again = resumed.get((*evidence_key(line), line.attempt))
        if again is not None:
            trial.name += f" (superseded by attempt-{again.attempt}: resumed after interrupted)"
        return trial

    try:
        baselines.ready(suite, workdir, lines)
        report.trials = forked_map(one, lines, REPLAYS_AT_ONCE)
    finally:
        baselines.close()
    counts = count_reps(report, lines, rows, plans.items)
    counted = [x for x in final_lines(lines) if evidence_key(x) not in replaced]
    judge_publishability(report, counted, counts, planned_versions(plans.items))
    older = sum(1 for t in report.trials if t.older_code and not t.rescored)
    if older:
        report.publish_problems.append(
            f"{older} row(s) scored-by-older-code: `evalkit results rescore {workdir}` scores them "
            "again with the current code, beside the old rows"
        )
    calibration_verdict(report, plans.items, rows, lines, replaced)
    return report



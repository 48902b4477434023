"""`evalkit report`: what a results folder says, with the uncertainty and the gaps in view.

Rates are always split by set, level, model, subject (variant and wording hash) and
polarity, each with a Wilson 95 % interval; ERROR rows stay in every denominator so a crash
can never raise a rate. A folder holding an inner-loop grid says so before any rate, and a
suite's expected pass bars are set beside what was observed, misses included.
Planned reps with no row are named, and the publishability verdict is the one `verify`
recorded while the records it re-derived are unchanged (stale otherwise), so a table is
never read without knowing how far to trust it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import NotFoundError
from evalkit.models import (
    Level,
    Plan,
    Polarity,
    ResultRow,
    ScenarioSet,
)
from evalkit.records.folder.manifest import ManifestSummary
from evalkit.records.folder.results import read_results
from evalkit.records.folder.scenario_rows import with_scenarios
from evalkit.records.folder.workdir import RESULTS, Workdir, grid_gaps
from evalkit.records.report.activation import activation_table
from evalkit.records.report.expected import expected_checks
from evalkit.records.report.factors import (
    bundle_declarations,
    cli_versions_of,
    version_order,
)
from evalkit.records.report.model import (
    LEVELS,
    POLARITIES,
    SETS,
    LevelTable,
    ModelKey,
    ModelSummary,
    Report,
    SubjectKey,
    SubjectRows,
    UnknownScenario,
)
from evalkit.records.report.publishability import (
    calibrated_publishability,
    check_suite,
    verified_publishability,
)
from evalkit.records.report.tally import (
    breached,
    missing_cells,
    noise,
    rate,
    retry_counts,
    tally_cell,
    usage_by_model,
)
from evalkit.records.rows.agent import agent_of
from evalkit.records.rows.backend import backend_of
from evalkit.records.rows.judge import judge_counts, judge_of
from evalkit.records.rows.subject import subject_hash_of, variant_of
from evalkit.records.verify.calibration import read_calibration
from evalkit.records.verify.counts import counted_rows, rescored_keys
from evalkit.suite.config import Suite
from evalkit.suite.lock import Lock, folder_label, read_lock, set_label
from evalkit.suite.provenance import labelled
from evalkit.suite.subject import SUITE_VARIANT

GroupKey = tuple[ScenarioSet, str, ModelKey, SubjectKey, Polarity]
"""set, level (or `kind:<kind>`), model, subject, polarity: the rows one cell counts."""
Groups = dict[GroupKey, list[tuple[str, ResultRow]]]


@dataclass
class _Read:
    """A folder's records as the report reads them: rescored rows replaced."""

    records: Workdir
    plans: list[Plan]
    counts: dict[str, int]
    rows: list[ResultRow]
    every: list[ResultRow]
    rescored_rows: int
    unreadable: list[str]
    lines: list[ManifestSummary]


@dataclass
class _Factors:
    """What each row is split by beyond its scenario: subject, CLI version, judge, agent."""

    subject_of: dict[int, SubjectKey]
    subjects: list[tuple[SubjectKey, int]]
    versions: list[str]
    judge_of_row: dict[int, str]
    agent_of_row: dict[int, str]
    backend_of_row: dict[int, str]
    judges: Counter[str]
    agents: Counter[str]
    backends: Counter[str]

    @property
    def order(self) -> dict[SubjectKey, int]:
        return {key: i for i, (key, _) in enumerate(self.subjects)}

    def column_order(self, column: tuple[ModelKey, SubjectKey]) -> tuple[Any, ...]:
        """Columns by agent, backend, model, CLI version, judge, then subject."""
        (model, cli, judge, agent, backend), subject = column
        return (agent, backend, model, version_order(cli), judge, self.order[subject])

    def model_key(self, row: ResultRow) -> ModelKey:
        """The row's model, with each factor the rows hold several of."""
        return (
            row.model,
            row.cli_version if len(self.versions) > 1 else "",
            self.judge_of_row[id(row)] if len(self.judges) > 1 else "",
            self.agent_of_row[id(row)] if len(self.agents) > 1 else "",
            self.backend_of_row[id(row)] if len(self.backends) > 1 else "",
        )


def build_report(suite: Suite, workdir: Path) -> Report:
    """Everything `evalkit report` shows, from WORKDIR's results, plans and manifest."""
    read = _read_folder(Workdir(workdir))
    check_suite(suite, read.records, read.plans, read.lines)
    lock = read_lock(suite)
    rows, lines, plans = read.rows, read.lines, read.plans
    factors = _factors_of(rows, bundle_declarations(lines))
    variants = {variant for variant, _ in factors.subject_of.values()}
    labels = {
        which: labelled(suite.root, which, folder_label(lock, which, variants)) for which in SETS
    }
    unknown_ids: set[str] = set()
    groups = _group_rows(suite, rows, factors, unknown_ids)
    keyed = [
        (sf, row, factors.model_key(row), factors.subject_of[id(row)])
        for row, sf in with_scenarios(suite, rows, set())
    ]
    columns = sorted({(key[2], key[3]) for key in groups}, key=factors.column_order)
    levels = _level_tables(groups, columns, labels)
    inner_runs = sorted({p.run_id for p in plans if p.inner_loop})
    missing = missing_cells(plans, read.every)
    gaps = grid_gaps(plans)
    calibration = read_calibration(plans, rows, (x.model for x in lines))
    return Report(
        suite=suite.name,
        workdir=str(read.records.root),
        results_files=read.counts,
        rows=len(rows),
        breaches=sum(1 for r in rows if breached(r)),
        unconfined=sum(1 for r in rows if "unconfined" in r.flags.split(";")),
        sets=labels,
        inner_loop=bool(inner_runs),
        inner_loop_runs=inner_runs,
        subjects=[SubjectRows(variant=v, subject_hash=h, rows=n) for (v, h), n in factors.subjects],
        judges=dict(sorted(factors.judges.items())),
        agents=dict(sorted(factors.agents.items())),
        backends=dict(sorted(factors.backends.items())),
        cli_versions=factors.versions,
        levels=levels,
        models=_summaries(suite, lock, groups, columns),
        expected=expected_checks(suite.config.expected, levels),
        incomplete=bool(missing or gaps),
        grid_gaps=gaps,
        missing=missing,
        activation=activation_table(suite, keyed),
        unknown=_unknown(rows, unknown_ids),
        usage=usage_by_model(lines),
        retries=retry_counts(lines),
        rescored_rows=read.rescored_rows,
        unreadable=read.unreadable,
        publishability=calibrated_publishability(
            suite, read.records, plans, lines, calibration.headline
        )
        if calibration
        else verified_publishability(suite, read.records, plans, lines),
        calibration=calibration,
    )


def _read_folder(records: Workdir) -> _Read:
    """The folder's plans, rows and evidence index; refused when it holds neither rows nor plans."""
    read_plans = records.read_plans()
    plans = read_plans.items
    unreadable = list(read_plans.problems)
    counts: dict[str, int] = {}
    rows: list[ResultRow] = []
    for path in records.results_files(plans):
        read = read_results(path)
        counts[records.relative(path)] = len(read.rows)
        rows += read.plain_rows
        unreadable += read.problems
    lines = records.read_manifest_summaries().items if records.has_evidence_index() else []
    replaced = rescored_keys(lines)
    rescored_rows = sum(1 for r in rows if (r.run_id, r.scenario, r.model, r.rep) in replaced)
    every = rows
    rows = counted_rows(rows, lines)
    if not rows and not plans:
        what = "is empty" if records.results.is_file() else "does not exist"
        raise NotFoundError(
            f"{records.root / RESULTS}: the results file {what}; run `evalkit run` or "
            "`evalkit grid` into this folder first"
        )
    return _Read(records, plans, counts, rows, every, rescored_rows, unreadable, lines)


def _factors_of(rows: list[ResultRow], decls: dict[str, dict[str, Any]]) -> _Factors:
    subject_of = {
        id(row): (variant_of(row, d), subject_hash_of(row, d))
        for row in rows
        for d in [decls.get(row.bundle_id, {})]
    }
    subjects = sorted(
        Counter(subject_of[id(r)] for r in rows).items(),
        key=lambda item: (item[0][0] != SUITE_VARIANT, item[0][0]),
    )
    agent_of_row = {id(r): agent_of(decls.get(r.bundle_id, {})) for r in rows}
    backend_of_row = {id(r): backend_of(decls.get(r.bundle_id, {})) for r in rows}
    return _Factors(
        subject_of=subject_of,
        subjects=subjects,
        versions=cli_versions_of(rows),
        judge_of_row={id(r): judge_of(decls.get(r.bundle_id, {})) for r in rows},
        agent_of_row=agent_of_row,
        backend_of_row=backend_of_row,
        judges=judge_counts(decls.get(r.bundle_id, {}) for r in rows),
        agents=Counter(agent_of_row.values()),
        backends=Counter(backend_of_row.values()),
    )


def _group_rows(
    suite: Suite, rows: list[ResultRow], factors: _Factors, unknown_ids: set[str]
) -> Groups:
    """Each row under its cell's key, with its scenario id; rows of scenarios the suite no
    longer holds are left out and their ids added to UNKNOWN_IDS."""
    groups: Groups = {}
    for row, sf in with_scenarios(suite, rows, unknown_ids):
        s = sf.scenario
        group_name = s.level or f"kind:{s.kind or '-'}"
        key = (s.set, group_name, factors.model_key(row), factors.subject_of[id(row)], s.polarity)
        groups.setdefault(key, []).append((sf.id, row))
    return groups


def _level_tables(
    groups: Groups, columns: list[tuple[ModelKey, SubjectKey]], labels: dict[ScenarioSet, str]
) -> list[LevelTable]:
    kinds = sorted({key[1] for key in groups if key[1].startswith("kind:")})
    levels = []
    for which in SETS:
        for name in [*LEVELS, *kinds]:
            cells = [
                tally_cell(model, subject, pol, [r for _, r in group], [i for i, _ in group])
                for model, subject in columns
                for pol in POLARITIES
                if (group := groups.get((which, name, model, subject, pol)))
            ]
            if not cells:
                continue
            level: Level | None = None if name.startswith("kind:") else name  # type: ignore[assignment]
            kind = name[len("kind:") :] if level is None else None
            levels.append(
                LevelTable(set=which, label=labels[which], level=level, kind=kind, cells=cells)
            )
    return levels


def _summaries(
    suite: Suite, lock: Lock | None, groups: Groups, columns: list[tuple[ModelKey, SubjectKey]]
) -> list[ModelSummary]:
    """Per set, model and subject: recall over the positives, specificity over the negatives."""
    pooled: dict[tuple[ScenarioSet, ModelKey, SubjectKey, Polarity], list[ResultRow]] = {}
    for (which, _, model, subject, pol), group in groups.items():
        pooled.setdefault((which, model, subject, pol), []).extend(r for _, r in group)
    return [
        ModelSummary(
            set=which,
            label=labelled(suite.root, which, set_label(lock, which, subject[0])),
            model=model[0],
            cli_version=model[1],
            judge=model[2],
            agent=model[3],
            backend=model[4],
            variant=subject[0],
            subject_hash=subject[1],
            recall=rate(pooled.get((which, model, subject, "positive"), [])),
            specificity=rate(pooled.get((which, model, subject, "negative"), [])),
            recall_noise=noise(pooled.get((which, model, subject, "positive"), [])),
            specificity_noise=noise(pooled.get((which, model, subject, "negative"), [])),
        )
        for which in SETS
        for model, subject in columns
        if any((which, model, subject, pol) in pooled for pol in POLARITIES)
    ]


def _unknown(rows: list[ResultRow], unknown_ids: set[str]) -> list[UnknownScenario]:
    """Rows of scenarios the suite no longer holds, counted per scenario and model."""
    unknown: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        if row.scenario in unknown_ids:
            unknown.setdefault((row.scenario, row.model), []).append(row)
    return [
        UnknownScenario(
            scenario=scenario,
            model=model,
            rows=len(found),
            passes=sum(1 for r in found if r.verdict == "PASS"),
            fails=sum(1 for r in found if r.verdict == "FAIL"),
            errors=sum(1 for r in found if r.verdict == "ERROR"),
        )
        for (scenario, model), found in sorted(unknown.items())
    ]

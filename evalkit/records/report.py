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
from pathlib import Path

from evalkit.errors import NotFoundError
from evalkit.models import (
    Level,
    Polarity,
    ResultRow,
    ScenarioSet,
)
from evalkit.records.calibration import read_calibration
from evalkit.records.report_expected import expected_checks
from evalkit.records.report_factors import (
    bundle_declarations,
    cli_versions_of,
    version_order,
)
from evalkit.records.report_model import (
    LEVELS,
    POLARITIES,
    SETS,
    LevelTable,
    ModelKey,
    ModelSummary,
    Report,
    Subject,
    SubjectKey,
    UnknownScenario,
)
from evalkit.records.report_publishability import (
    calibrated_publishability,
    check_suite,
    verified_publishability,
)
from evalkit.records.report_tally import (
    breached,
    missing_cells,
    rate,
    retry_counts,
    tally_cell,
    usage_by_model,
)
from evalkit.records.results import read_results
from evalkit.records.row_agent import agent_of
from evalkit.records.row_judge import judge_counts, judge_of
from evalkit.records.row_subject import subject_hash_of, variant_of
from evalkit.records.scenario_rows import with_scenarios
from evalkit.records.verify import rescored_keys
from evalkit.records.workdir import RESULTS, Workdir, grid_gaps
from evalkit.suite.config import Suite
from evalkit.suite.lock import folder_label, read_lock, set_label
from evalkit.suite.provenance import labelled
from evalkit.suite.subject import SUITE_VARIANT

# --------------------------------------------------------------------------- the model


# --------------------------------------------------------------------------- arithmetic


# --------------------------------------------------------------------------- gathering


def build_report(suite: Suite, workdir: Path) -> Report:
    """Everything `evalkit report` shows, from WORKDIR's results, plans and manifest."""
    records = Workdir(workdir)
    workdir = records.root
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
    lines = records.read_evidence_index().items if records.has_evidence_index() else []
    replaced = rescored_keys(lines)
    rescored_rows = sum(1 for r in rows if (r.run_id, r.scenario, r.model, r.rep) in replaced)
    every = rows
    rows = [r for r in rows if (r.run_id, r.scenario, r.model, r.rep) not in replaced]
    if not rows and not plans:
        what = "is empty" if records.results.is_file() else "does not exist"
        raise NotFoundError(
            f"{workdir / RESULTS}: the results file {what}; run `evalkit run` or "
            "`evalkit grid` into this folder first"
        )
    check_suite(suite, records)

    lock = read_lock(suite)
    decls = bundle_declarations(lines)
    subject_of = {
        id(row): (variant_of(row, d), subject_hash_of(row, d))
        for row in rows
        for d in [decls.get(row.bundle_id, {})]
    }
    subjects = sorted(
        Counter(subject_of[id(r)] for r in rows).items(),
        key=lambda item: (item[0][0] != SUITE_VARIANT, item[0][0]),
    )
    order = {key: i for i, (key, _) in enumerate(subjects)}
    variants = {variant for variant, _ in subject_of.values()}
    versions = cli_versions_of(rows)
    split_cli = len(versions) > 1
    judge_of_row = {id(r): judge_of(decls.get(r.bundle_id, {})) for r in rows}
    agent_of_row = {id(r): agent_of(decls.get(r.bundle_id, {})) for r in rows}
    judges = judge_counts(decls.get(r.bundle_id, {}) for r in rows)
    agents = Counter(agent_of_row.values())
    split_judge, split_agent = len(judges) > 1, len(agents) > 1
    labels = {
        which: labelled(suite.root, which, folder_label(lock, which, variants)) for which in SETS
    }
    groups: dict[
        tuple[ScenarioSet, str, ModelKey, SubjectKey, Polarity], list[tuple[str, ResultRow]]
    ]
    groups = {}
    unknown_ids: set[str] = set()
    for row, sf in with_scenarios(suite, rows, unknown_ids):
        s = sf.scenario
        group_name = s.level or f"kind:{s.kind or '-'}"
        model_key = (
            row.model,
            row.cli_version if split_cli else "",
            judge_of_row[id(row)] if split_judge else "",
            agent_of_row[id(row)] if split_agent else "",
        )
        key = (s.set, group_name, model_key, subject_of[id(row)], s.polarity)
        groups.setdefault(key, []).append((sf.id, row))

    columns = sorted(
        {(key[2], key[3]) for key in groups},
        key=lambda c: (c[0][3], c[0][0], version_order(c[0][1]), c[0][2], order[c[1]]),
    )
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

    pooled: dict[tuple[ScenarioSet, ModelKey, SubjectKey, Polarity], list[ResultRow]] = {}
    for (which, _, model, subject, pol), group in groups.items():
        pooled.setdefault((which, model, subject, pol), []).extend(r for _, r in group)
    summaries = [
        ModelSummary(
            set=which,
            label=labelled(suite.root, which, set_label(lock, which, subject[0])),
            model=model[0],
            cli_version=model[1],
            judge=model[2],
            agent=model[3],
            variant=subject[0],
            subject_hash=subject[1],
            recall=rate(pooled.get((which, model, subject, "positive"), [])),
            specificity=rate(pooled.get((which, model, subject, "negative"), [])),
        )
        for which in SETS
        for model, subject in columns
        if any((which, model, subject, pol) in pooled for pol in POLARITIES)
    ]
    inner_runs = sorted({p.run_id for p in plans if p.inner_loop})
    unknown: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        if row.scenario in unknown_ids:
            unknown.setdefault((row.scenario, row.model), []).append(row)

    missing = missing_cells(plans, every)
    gaps = grid_gaps(plans)
    calibration = read_calibration(plans, rows, (x.model for x in lines))
    return Report(
        suite=suite.name,
        workdir=str(workdir),
        results_files=counts,
        rows=len(rows),
        breaches=sum(1 for r in rows if breached(r)),
        unconfined=sum(1 for r in rows if "unconfined" in r.flags.split(";")),
        sets=labels,
        inner_loop=bool(inner_runs),
        inner_loop_runs=inner_runs,
        subjects=[Subject(variant=v, subject_hash=h, rows=n) for (v, h), n in subjects],
        judges=dict(sorted(judges.items())),
        agents=dict(sorted(agents.items())),
        cli_versions=versions,
        levels=levels,
        models=summaries,
        expected=expected_checks(suite.config.expected, levels),
        incomplete=bool(missing or gaps),
        grid_gaps=gaps,
        missing=missing,
        unknown=[
            UnknownScenario(
                scenario=scenario,
                model=model,
                rows=len(found),
                passes=sum(1 for r in found if r.verdict == "PASS"),
                fails=sum(1 for r in found if r.verdict == "FAIL"),
                errors=sum(1 for r in found if r.verdict == "ERROR"),
            )
            for (scenario, model), found in sorted(unknown.items())
        ],
        usage=usage_by_model(lines),
        retries=retry_counts(lines),
        rescored_rows=rescored_rows,
        unreadable=unreadable,
        publishability=calibrated_publishability(suite, records, plans, lines, calibration.headline)
        if calibration
        else verified_publishability(suite, records, plans, lines),
        calibration=calibration,
    )


# --------------------------------------------------------------------------- text forms

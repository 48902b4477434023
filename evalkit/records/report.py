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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from evalkit.errors import EvalkitError, NotFoundError, RefusedError
from evalkit.models import (
    EvidenceLine,
    ExpectedBar,
    Level,
    Model,
    Plan,
    Polarity,
    ResultRow,
    ScenarioSet,
)
from evalkit.records.calibration import NOT_A_MEASUREMENT, Calibration, read_calibration
from evalkit.records.results import read_results
from evalkit.records.row_agent import DEFAULT_AGENT, agent_of
from evalkit.records.row_judge import judge_counts, judge_of
from evalkit.records.row_subject import UNKNOWN, short_hash, subject_hash_of, variant_of
from evalkit.records.scenario_rows import with_scenarios
from evalkit.records.verification import read_verification
from evalkit.records.verify import rescored_keys
from evalkit.records.versions import semver_key
from evalkit.records.workdir import RESULTS, Workdir, grid_gaps, tally
from evalkit.stats import clustered_interval, wilson
from evalkit.suite.config import Suite
from evalkit.suite.lock import folder_label, read_lock, set_label
from evalkit.suite.provenance import labelled
from evalkit.suite.subject import SUITE_VARIANT

REPORT_SCHEMA_VERSION = 1
Z95 = 1.96
"""The z of the report's rep-level intervals, as its pages have always shown them."""
LEVELS: tuple[Level, ...] = ("L1", "L2", "L3")
SETS: tuple[ScenarioSet, ...] = ("run", "reserve")
POLARITIES: tuple[Polarity, ...] = ("positive", "negative")
SubjectKey = tuple[str, str]
ModelKey = tuple[str, str, str, str]
"""model; the CLI version, the judge and the agent, each where the rows hold several (else
empty)."""
"""variant, subject hash: the wording under test a row ran with."""
# --------------------------------------------------------------------------- the model


CLUSTERED = "clustered by scenario"
INDEPENDENT = "reps as independent"
ONE_SCENARIO = "n/a (one scenario)"


class Rate(Model):
    """PASS k of n, where n counts PASS, FAIL and ERROR rows alike.

    Its headline interval counts scenarios, not reps: reps of one scenario are alike, and the
    scenario is what generalises. Where the rows come from one scenario there is no clustered
    interval and the rep-level Wilson interval is the headline, labelled as such."""

    k: int = Field(description="PASS rows")
    n: int = Field(description="PASS + FAIL + ERROR rows")
    errors: int = Field(description="ERROR rows, inside n and never passes")
    rate: float | None = Field(description="k / n; null when n is 0")
    low: float | None = Field(
        description="Wilson 95 % lower bound, reps as independent; null when n is 0"
    )
    high: float | None = Field(
        description="Wilson 95 % upper bound, reps as independent; null when n is 0"
    )
    scenarios: int = Field(0, description="G: the scenarios the rows come from")
    clustered_low: float | None = Field(
        None, description="scenario-clustered 95 % lower bound; null when G < 2"
    )
    clustered_high: float | None = Field(
        None, description="scenario-clustered 95 % upper bound; null when G < 2"
    )
    deff: float | None = Field(None, description="design effect of the clustering; null when G < 2")
    headline: str = Field(
        "",
        description=f"which interval is the headline: '{CLUSTERED}', or '{INDEPENDENT}' when "
        "G is 1; empty when n is 0",
    )

    @property
    def head_low(self) -> float | None:
        return self.clustered_low if self.headline == CLUSTERED else self.low

    @property
    def head_high(self) -> float | None:
        return self.clustered_high if self.headline == CLUSTERED else self.high


class Cell(Model):
    """One model with one subject on one polarity at one level of one set."""

    model: str
    variant: str = Field("suite", description="the subject's variant; 'suite': its own wording")
    subject_hash: str = Field("", description="the subject's hash; empty when nothing says")
    cli_version: str = Field("", description="the CLI version; empty unless rows ran several")
    judge: str = Field("", description="the judge identity; empty unless rows hold several")
    agent: str = Field("", description="the agent; empty unless rows hold several")
    polarity: Polarity
    scenarios: list[str]
    pass_rate: Rate
    fails: int
    b_fail: int = Field(description="rows whose b column is B:FAIL")
    breaches: int = Field(0, description="rows naming a real-vault-breach, whatever the verdict")
    a_via: dict[str, int] = Field(
        description="positives: PASS rows by the kind of their A-via reason; empty for negatives"
    )
    axis_a: Rate | None = Field(
        None,
        description="positives: rows whose axis A passed (A:PASS) over all positive rows, "
        "whatever axis B said; null for negatives",
    )
    b_via: dict[str, int] = Field(
        default_factory=dict,
        description="positives: PASS rows by their B-via reason (the route axis B passed by); "
        "empty for negatives or a checker that names none",
    )
    flags: dict[str, int] = Field(description="informational flag -> rows carrying it")


class LevelTable(Model):
    """One group of scenarios in one set: a ladder level, or a kind where there is no ladder."""

    set: ScenarioSet
    label: str = Field(description="contamination label of the set")
    level: Level | None = Field(None, description="the ladder level; null in a suite without one")
    kind: str | None = Field(None, description="the scenarios' kind where there is no level")
    cells: list[Cell]


class ModelSummary(Model):
    """Recall and specificity kept apart: one number across polarities would hide either."""

    set: ScenarioSet
    label: str
    model: str
    variant: str = Field("suite", description="the subject's variant; 'suite': its own wording")
    subject_hash: str = Field("", description="the subject's hash; empty when nothing says")
    cli_version: str = Field("", description="the CLI version; empty unless rows ran several")
    judge: str = Field("", description="the judge identity; empty unless rows hold several")
    agent: str = Field("", description="the agent; empty unless rows hold several")
    recall: Rate = Field(description="PASS over positive rows")
    specificity: Rate = Field(description="PASS over negative rows")


class Subject(Model):
    """One subject the folder's rows ran with: rates of two subjects are never pooled."""

    variant: str
    subject_hash: str = Field(description="empty when neither the row nor the manifest says")
    rows: int


ExpectedVerdict = Literal["met", "unclear", "miss"]


class ExpectedCheck(Model):
    """A suite's hypothesised pass bar set beside one cell's observed rate.

    met: the observed rate reaches the bar. miss: even the interval's upper bound is below
    it. unclear: the rate is below the bar but the interval still reaches it.
    """

    set: ScenarioSet
    label: str
    level: str = Field(description="the level (or kind) the bar is stated for")
    model: str
    variant: str
    subject_hash: str
    cli_version: str = Field("", description="the CLI version; empty unless rows ran several")
    judge: str = Field("", description="the judge identity; empty unless rows hold several")
    agent: str = Field("", description="the agent; empty unless rows hold several")
    polarity: Polarity
    bar: float | None = Field(
        description="the expected minimum pass rate from evalkit.yaml `expected:`; null when "
        "only a maximum is stated"
    )
    bar_max: float | None = Field(None, description="the expected maximum; null when none")
    tier: str = Field("", description="the model tier the bar was stated for; empty: all")
    observed: Rate
    verdict: ExpectedVerdict

    @property
    def bar_text(self) -> str:
        if self.bar is not None and self.bar_max is not None:
            return f"{self.bar:.2f}-{self.bar_max:.2f}"
        if self.bar_max is not None:
            return f"<= {self.bar_max:.2f}"
        return f">= {self.bar or 0:.2f}"


class MissingCell(Model):
    run_id: str
    scenario: str
    model: str
    planned: int
    recorded: int
    skipped: int = Field(0, description="of the missing reps, those the run chose not to start")
    skip_reason: str = Field("", description="why, e.g. skipped:budget")


USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "turns",
    "duration_ms",
    "cost_usd_estimate",
)


class Usage(Model):
    """What one model's attempts used, superseded attempts included: they were paid for."""

    model: str
    attempts: int
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    turns: int = 0
    duration_ms: int = 0
    cost_usd_estimate: float = Field(
        0.0, description="the CLI's own estimate from its bundled price table; not a bill"
    )


class Retries(Model):
    """Reps whose row is a later attempt, and why their earlier attempts were run again."""

    reps: int
    attempts: int = Field(description="superseded attempts, kept as evidence")
    reasons: dict[str, int]


class UnknownScenario(Model):
    """Rows whose scenario is no longer in the suite: counted, never dropped."""

    scenario: str
    model: str
    rows: int
    passes: int
    fails: int
    errors: int


class Publishability(Model):
    publishable: bool
    problems: list[str]
    verdict: str = Field(description="PUBLISHABLE, or NOT PUBLISHABLE: reasons")
    verification: str = Field(
        "missing", description="fresh, stale, missing or unreadable: verify's record of the folder"
    )
    verified_at: str | None = Field(None, description="when that record was written")


class Report(Model):
    schema_version: int = REPORT_SCHEMA_VERSION
    suite: str
    workdir: str
    results_files: dict[str, int] = Field(description="file (as named) -> rows read from it")
    rows: int
    breaches: int = Field(0, description="rows naming a real-vault-breach, any verdict or scenario")
    unconfined: int = Field(
        0, description="rows flagged unconfined: run without their OS sandbox (never publishable)"
    )
    sets: dict[str, str] = Field(description="run / reserve -> contamination label")
    inner_loop: bool = Field(
        False,
        description="rows of an inner-loop grid (failed cells plus controls) are counted: "
        "no rate here is the whole set's",
    )
    inner_loop_runs: list[str] = Field(
        default_factory=list, description="run ids of the folder's inner-loop plans"
    )
    subjects: list[Subject] = Field(default_factory=list)
    judges: dict[str, int] = Field(
        default_factory=dict,
        description="judge identity -> rows it decided (claude:<model>, command:sha256:<hash>, "
        "scripted); rows that declare none are left out. Rates are split by it when there "
        "are several",
    )
    agents: dict[str, int] = Field(
        default_factory=dict,
        description="agent -> rows it ran (claude, codex, gemini); rates are split by it when "
        "there are several",
    )
    cli_versions: list[str] = Field(
        default_factory=list, description="the CLI versions rows ran with, in semver order"
    )
    levels: list[LevelTable]
    models: list[ModelSummary]
    expected: list[ExpectedCheck] = Field(
        default_factory=list, description="every cell whose level and polarity have a bar"
    )
    incomplete: bool
    missing: list[MissingCell]
    grid_gaps: list[str] = Field(
        default_factory=list,
        description="why a sharded grid in the folder is not whole: missing shards, shards cut "
        "with different N, a shard under two run ids",
    )
    unknown: list[UnknownScenario]
    usage: list[Usage] = Field(default_factory=list)
    retries: Retries = Field(default_factory=lambda: Retries(reps=0, attempts=0, reasons={}))
    rescored_rows: int = Field(
        0, description="rows replaced by a later `evalkit rescore`: kept in the file, not counted"
    )
    unreadable: list[str] = Field(
        default_factory=list,
        description="file:line of each plan, manifest or results line that did not read, skipped",
    )
    publishability: Publishability
    calibration: Calibration | None = Field(
        None,
        description="a calibration folder's cells against their expected verdicts; its "
        "publishability then says how they came out and whether verify re-derived them",
    )


# --------------------------------------------------------------------------- arithmetic


def rate(rows: list[ResultRow]) -> Rate:
    """The pooled rate with both intervals: clustered by scenario (ERROR is not a pass) and
    the rep-level Wilson interval beside it."""
    k = sum(1 for r in rows if r.verdict == "PASS")
    n = len(rows)
    bounds = wilson(k, n, Z95)
    per_scenario: dict[str, list[int]] = {}
    for row in rows:
        counts = per_scenario.setdefault(row.scenario, [0, 0])
        counts[0] += row.verdict == "PASS"
        counts[1] += 1
    clustered = clustered_interval([(a, b) for a, b in per_scenario.values()])
    return Rate(
        k=k,
        n=n,
        errors=sum(1 for r in rows if r.verdict == "ERROR"),
        rate=k / n if n else None,
        low=bounds[0] if bounds else None,
        high=bounds[1] if bounds else None,
        scenarios=len(per_scenario),
        clustered_low=clustered.low if clustered else None,
        clustered_high=clustered.high if clustered else None,
        deff=clustered.deff if clustered else None,
        headline=(CLUSTERED if clustered else INDEPENDENT) if n else "",
    )


def tokens(row: ResultRow) -> list[str]:
    return [t for t in row.reasons.split(";") if t and t != "-"]


def flag_tokens(row: ResultRow) -> list[str]:
    return [t for t in row.flags.split(";") if t and t != "-"]


def flag_key(token: str) -> str | None:
    """The name a flag is counted under: `name:yes` whole, `name:no` not at all, others by name."""
    name, _, value = token.partition(":")
    if value == "yes":
        return token
    if value == "no":
        return None
    return name


def breached(row: ResultRow) -> bool:
    """A row whose decisive reasons name a write into a guarded real-world path."""
    return any(t.startswith("real-vault-breach:") for t in tokens(row))


def _cell(
    model: ModelKey, subject: SubjectKey, polarity: Polarity, rows: list[ResultRow], ids: list[str]
) -> Cell:
    flags: Counter[str] = Counter()
    via: Counter[str] = Counter()
    b_via: Counter[str] = Counter()
    for row in rows:
        flags.update({k for k in map(flag_key, flag_tokens(row)) if k is not None})
        if polarity == "positive" and row.verdict == "PASS":
            via.update({t.split(":")[1] for t in tokens(row) if t.startswith("A-via:")})
            routes = {t.split(":")[1] for t in tokens(row) if t.startswith("B-via:")}
            b_via.update(routes or {"none named"})
    return Cell(
        model=model[0],
        cli_version=model[1],
        judge=model[2],
        agent=model[3],
        variant=subject[0],
        subject_hash=subject[1],
        polarity=polarity,
        scenarios=sorted(set(ids)),
        pass_rate=rate(rows),
        fails=sum(1 for r in rows if r.verdict == "FAIL"),
        b_fail=sum(1 for r in rows if r.b == "B:FAIL"),
        breaches=sum(1 for r in rows if breached(r)),
        a_via=dict(sorted(via.items())),
        axis_a=_axis_a(rows) if polarity == "positive" else None,
        b_via=dict(sorted(b_via.items())),
        flags=dict(sorted(flags.items())),
    )


def _axis_a(rows: list[ResultRow]) -> Rate:
    """Axis A over every positive row: did the agent act at all, whatever axis B then said.
    An ERROR row is in n and never an axis-A pass, as in every rate."""

    def as_axis_a(row: ResultRow) -> ResultRow:
        if row.verdict == "ERROR":
            return row
        return row.model_copy(update={"verdict": "PASS" if row.a == "A:PASS" else "FAIL"})

    return rate([as_axis_a(r) for r in rows])


# --------------------------------------------------------------------------- gathering


def _missing(plans: list[Plan], rows: list[ResultRow]) -> list[MissingCell]:
    counts = tally(plans, [(r.run_id, r.scenario, r.model, r.rep) for r in rows])
    return [
        MissingCell(
            run_id=c.run_id,
            scenario=c.scenario,
            model=c.model,
            planned=c.planned,
            recorded=c.recorded,
            skipped=c.skipped,
            skip_reason=c.skip_reason,
        )
        for c in counts
        if c.recorded < c.planned
    ]


def _usage(lines: list[EvidenceLine]) -> list[Usage]:
    sums: dict[str, dict[str, float]] = {}
    attempts: Counter[str] = Counter()
    for line in lines:
        attempts[line.model] += 1
        total = sums.setdefault(line.model, dict.fromkeys(USAGE_KEYS, 0.0))
        for key in USAGE_KEYS:
            value = line.usage.get(key, 0)
            total[key] += value if isinstance(value, int | float) else 0
    return [
        Usage(
            model=model,
            attempts=attempts[model],
            **{k: (round(v, 6) if k == "cost_usd_estimate" else int(v)) for k, v in total.items()},
        )
        for model, total in sorted(sums.items())
    ]


def _retries(lines: list[EvidenceLine]) -> Retries:
    superseded = [x for x in lines if x.superseded_by is not None]
    reasons = Counter(x.retry_reason or "unknown" for x in superseded)
    reps = {(x.run_id, x.scenario, x.model, x.rep) for x in superseded}
    return Retries(reps=len(reps), attempts=len(superseded), reasons=dict(sorted(reasons.items())))


def _check_suite(
    suite: Suite, records: Workdir, plans: list[Plan], lines: list[EvidenceLine]
) -> None:
    """A folder recorded for another suite is read with that suite, or not at all: its
    scenarios would otherwise all read as unknown."""
    recorded = records.recorded_suites(plans, lines)
    if recorded and suite.name not in recorded:
        raise RefusedError(
            f"{records.root}: holds reps of suite {', '.join(sorted(recorded))}, but the suite "
            f"given is {suite.name}; pass that suite's folder with --suite"
        )


def _publishability(
    suite: Suite, records: Workdir, plans: list[Plan], lines: list[EvidenceLine]
) -> Publishability:
    """verify's recorded verdict, while the records it was drawn from are unchanged."""
    if not records.has_evidence_index():
        problems, state, at = ["no evidence manifest"], "missing", None
    else:
        found = read_verification(suite, records, plans, lines)
        problems, state = found.problems(records.root), found.state
        at = found.record.verified_at if found.record else None
    verdict = "NOT PUBLISHABLE: " + "; ".join(problems) if problems else "PUBLISHABLE"
    return Publishability(
        publishable=not problems,
        problems=problems,
        verdict=verdict,
        verification=state,
        verified_at=at,
    )


def _calibrated(
    suite: Suite, records: Workdir, plans: list[Plan], lines: list[EvidenceLine], headline: str
) -> Publishability:
    """A calibration folder is never published: its verdict line is how its cells came out,
    and its problems say whether verify re-derived every row."""
    problems = [NOT_A_MEASUREMENT]
    state, at = "missing", None
    if records.has_evidence_index():
        found = read_verification(suite, records, plans, lines)
        state, at = found.state, found.record.verified_at if found.record else None
        if found.state != "fresh":
            problems += found.problems(records.root)
        elif found.record is not None and not found.record.all_rederived:
            problems.append(
                f"not every row re-derives from its evidence: see `evalkit verify {records.root}`"
            )
    return Publishability(
        publishable=False, problems=problems, verdict=headline, verification=state, verified_at=at
    )


def bundle_declarations(lines: list[EvidenceLine]) -> dict[str, dict[str, Any]]:
    """Each bundle id's declarations: where an older row's variant and subject are kept."""
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        found.setdefault(line.bundle_id, line.declarations)
    return found


def expected_verdict(
    observed: Rate, bar: float | None, bar_max: float | None = None
) -> ExpectedVerdict:
    """met when the observed rate is within the bars; miss when even the Wilson interval lies
    wholly past one (its upper bound below the minimum, its lower bound above the maximum);
    unclear otherwise (past a bar, but too few reps to rule it out)."""
    verdicts: list[ExpectedVerdict] = []
    if bar is not None:
        if observed.rate is not None and observed.rate >= bar:
            verdicts.append("met")
        elif observed.high is not None and observed.high < bar:
            verdicts.append("miss")
        else:
            verdicts.append("unclear")
    if bar_max is not None:
        if observed.rate is not None and observed.rate <= bar_max:
            verdicts.append("met")
        elif observed.low is not None and observed.low > bar_max:
            verdicts.append("miss")
        else:
            verdicts.append("unclear")
    for worst in ("miss", "unclear"):
        if worst in verdicts:
            return worst
    return "met"


def expected_checks(bars: dict[str, ExpectedBar], levels: list[LevelTable]) -> list[ExpectedCheck]:
    """Every cell whose level (or kind) and polarity have a bar, in table order."""
    found = []
    for table in levels:
        name = table.level or table.kind or ""
        if name not in bars:
            continue
        for cell in table.cells:
            low, high = bars[name].for_model(cell.model, cell.polarity)
            if (low is None and high is None) or cell.pass_rate.n == 0:
                continue
            tier = next(
                (
                    t
                    for t, b in bars[name].models.items()
                    if (t == cell.model or t in cell.model)
                    and getattr(b, cell.polarity) is not None
                ),
                "",
            )
            found.append(
                ExpectedCheck(
                    set=table.set,
                    label=table.label,
                    level=name,
                    model=cell.model,
                    variant=cell.variant,
                    subject_hash=cell.subject_hash,
                    cli_version=cell.cli_version,
                    judge=cell.judge,
                    agent=cell.agent,
                    polarity=cell.polarity,
                    bar=low,
                    bar_max=high,
                    tier=tier,
                    observed=cell.pass_rate,
                    verdict=expected_verdict(cell.pass_rate, low, high),
                )
            )
    return found


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
    _check_suite(suite, records, plans, lines)

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
        key=lambda c: (c[0][3], c[0][0], _version_order(c[0][1]), c[0][2], order[c[1]]),
    )
    kinds = sorted({key[1] for key in groups if key[1].startswith("kind:")})
    levels = []
    for which in SETS:
        for name in [*LEVELS, *kinds]:
            cells = [
                _cell(model, subject, pol, [r for _, r in group], [i for i, _ in group])
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

    missing = _missing(plans, every)
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
        usage=_usage(lines),
        retries=_retries(lines),
        rescored_rows=rescored_rows,
        unreadable=unreadable,
        publishability=_calibrated(suite, records, plans, lines, calibration.headline)
        if calibration
        else _publishability(suite, records, plans, lines),
        calibration=calibration,
    )


# --------------------------------------------------------------------------- text forms


def fmt_bound(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def fmt_rate(r: Rate) -> str:
    """`k/n [low, high]` of the headline interval, named, with the other beside it; or
    `0/0 [none]` when there is nothing to estimate from."""
    if r.n == 0:
        return "0/0 [none]"
    wilson_part = f"[{fmt_bound(r.low)}, {fmt_bound(r.high)}]"
    if r.headline == CLUSTERED:
        return (
            f"{r.k}/{r.n} [{fmt_bound(r.clustered_low)}, {fmt_bound(r.clustered_high)}] "
            f"{CLUSTERED} (G {r.scenarios}, deff {r.deff:.2f}; {INDEPENDENT} {wilson_part})"
        )
    return f"{r.k}/{r.n} {wilson_part} {INDEPENDENT} (clustered: {ONE_SCENARIO})"


def fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "-"


def fmt_via(cell: Cell) -> str:
    return "-" if cell.polarity != "positive" else fmt_counts(cell.a_via)


LEVEL_COLUMNS = (
    "model",
    "polarity",
    "PASS k/n [95%]",
    "ERROR",
    "A-via (PASS)",
    "B:FAIL",
    "BREACH",
    "flags (rows)",
)
MODEL_COLUMNS = (
    "model",
    "recall: PASS k/n positives [95%]",
    "ERROR (pos)",
    "specificity: PASS k/n negatives [95%]",
    "ERROR (neg)",
)
INNER_MODEL_COLUMNS = (
    "model",
    "PASS k/n of the chosen positives [95%]",
    "ERROR (pos)",
    "PASS k/n of the chosen negatives [95%]",
    "ERROR (neg)",
)
SUBJECT_COLUMNS = ("variant", "subject")
EXPECTED_COLUMNS = ("set", "level", "model", "polarity", "verdict", "bar", "PASS k/n [Wilson 95%]")


def cli_versions_of(rows: list[ResultRow]) -> list[str]:
    """The CLI versions the rows ran with, in semver order (unparseable ones last)."""
    return sorted({r.cli_version for r in rows if r.cli_version}, key=_version_order)


def _version_order(version: str) -> tuple[int, Any]:
    try:
        return (0, semver_key(version))
    except EvalkitError:
        return (1, version)


def split_by_subject(report: Report) -> bool:
    """Several subjects: every table names each row's, since their rates are apart."""
    return len(report.subjects) > 1


def subject_cells(report: Report, variant: str, subject_hash: str) -> tuple[str, ...]:
    return (variant, short_hash(subject_hash)) if split_by_subject(report) else ()


def _factors(report: Report) -> list[tuple[str, str]]:
    """(column, field) of each factor the rows hold several of: agent, CLI version, judge."""
    found = []
    if len(report.agents) > 1:
        found.append(("agent", "agent"))
    if len(report.cli_versions) > 1:
        found.append(("cli", "cli_version"))
    if len(report.judges) > 1:
        found.append(("judge", "judge"))
    return found


def factor_cells(report: Report, record: Cell | ModelSummary | ExpectedCheck) -> tuple[str, ...]:
    """A row's agent, CLI version and judge, each where the report is split by it."""
    return tuple(str(getattr(record, name)) or "-" for _, name in _factors(report))


def with_subject(report: Report, columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns, with variant and subject after the model when the report is split by
    subject, and the agent, CLI version and judge where rows hold several of one."""
    subject = SUBJECT_COLUMNS if split_by_subject(report) else ()
    factors = tuple(column for column, _ in _factors(report))
    return (columns[0], *subject, *factors, *columns[1:])


def subject_lines(report: Report) -> list[str]:
    """Which wording the rows ran with: one line for one subject, one per subject for more,
    and a warning for a variant whose wording changed between runs."""
    if len(report.subjects) == 1:
        [one] = report.subjects
        return [f"subject: {one.variant} {one.subject_hash or UNKNOWN}"]
    out = [
        f"SUBJECTS: {len(report.subjects)} - every rate below is of one variant and subject "
        "hash; none is pooled across them"
    ]
    out += [f"  {x.variant} {x.subject_hash or UNKNOWN}: {x.rows} row(s)" for x in report.subjects]
    hashes = Counter(x.variant for x in report.subjects)
    out += [
        f"variant {v} ran with {n} subject hashes (its wording changed between runs); "
        "each is tabled apart"
        for v, n in hashes.items()
        if n > 1
    ]
    return out


def judge_line(report: Report) -> str:
    """Which judges decided the rows; several are a factor every rate below is split by."""
    named = ", ".join(f"{judge} {n} row(s)" for judge, n in report.judges.items())
    if len(report.judges) > 1:
        return (
            f"JUDGES: {len(report.judges)} ({named}): each rate below is of one judge, none "
            "pooled; the folder is not publishable until it is split by run id"
        )
    return f"judged by: {named}"


def agent_line(report: Report) -> str:
    """Which agents ran the rows; empty for Claude Code's alone, the agent a report assumes."""
    named = ", ".join(f"{agent} {n} row(s)" for agent, n in report.agents.items())
    if len(report.agents) > 1:
        return f"AGENTS: {len(report.agents)} ({named}): each rate below is of one agent"
    if list(report.agents) in ([], [DEFAULT_AGENT]):
        return ""
    return f"agent: {named}"


def inner_loop_line(report: Report) -> str:
    return (
        f"INNER LOOP: this folder holds an inner-loop grid ({', '.join(report.inner_loop_runs)}): "
        "the cells that failed before plus passing controls, not the whole set. No rate here "
        "is the set's recall or specificity."
    )


def expected_misses(report: Report) -> int:
    return sum(1 for x in report.expected if x.verdict == "miss")


def expected_line(report: Report) -> str:
    return (
        f"EXPECTED BAR MISSED: {expected_misses(report)} of {len(report.expected)} cell(s) "
        "below their hypothesised pass bar, interval included (see Expected against observed)"
    )


INTERVAL_NOTE = (
    "95% intervals count scenarios: the headline is clustered by scenario (G scenarios, "
    "design effect deff; Korn-Graubard: effective size with the df step, beta bounds); "
    "'indep' / 'reps as independent' is the rep-level Wilson interval beside it, optimistic "
    "when reps of one scenario are alike, and the only one for a cell of one scenario "
    "(clustered: n/a)"
)
EXPECTED_NOTE = (
    "met: PASS rate within the bars (at or above a minimum, at or below a maximum); miss: the "
    "Wilson 95% interval lies wholly below a minimum or above a maximum; unclear: past a bar, "
    "but the interval still reaches it"
)


def level_title(table: LevelTable, inner_loop: bool = False) -> str:
    title = f"{table.level or table.kind} - {table.set} set ({table.label})"
    return title + (" - inner loop, not the whole set" if inner_loop else "")


def model_title(report: Report, which: ScenarioSet) -> str:
    if report.inner_loop:
        return f"Per model - {which} set - inner loop: not the set's recall or specificity"
    return f"Per model - {which} set ({report.sets[which]})"


def expected_title(report: Report) -> str:
    return "Expected against observed" + (
        " - inner loop: chosen cells, not the set" if report.inner_loop else ""
    )


EARNED_COLUMNS = ("model", "set", "level", "axis A: k/n positives [95%]", "PASS", "B-via (PASS)")
EARNED_NOTE = (
    "axis A: positives where the agent acted (A:PASS) of all positives, whatever axis B said; "
    "B-via: the route each positive PASS took on axis B, as the checker names it"
)


def earned_rows(report: Report, fmt: Callable[[Rate], str] = fmt_rate) -> list[tuple[str, ...]]:
    """Per positive cell: the axis-A rate over all positives, and the PASS rows by B route."""
    return [
        (
            c.model,
            *subject_cells(report, c.variant, c.subject_hash),
            *factor_cells(report, c),
            table.set,
            table.level or table.kind or "-",
            fmt(c.axis_a),
            str(c.pass_rate.k),
            fmt_counts(c.b_via),
        )
        for table in report.levels
        for c in table.cells
        if c.polarity == "positive" and c.axis_a is not None
    ]


def level_rows(table: LevelTable, report: Report | None = None) -> list[tuple[str, ...]]:
    return [
        (
            c.model,
            *(subject_cells(report, c.variant, c.subject_hash) if report else ()),
            *(factor_cells(report, c) if report else ()),
            c.polarity,
            fmt_rate(c.pass_rate),
            str(c.pass_rate.errors),
            fmt_via(c),
            str(c.b_fail),
            str(c.breaches),
            fmt_counts(c.flags),
        )
        for c in table.cells
    ]


def model_rows(report: Report, which: ScenarioSet) -> list[tuple[str, ...]]:
    return [
        (
            m.model,
            *subject_cells(report, m.variant, m.subject_hash),
            *factor_cells(report, m),
            fmt_rate(m.recall),
            str(m.recall.errors),
            fmt_rate(m.specificity),
            str(m.specificity.errors),
        )
        for m in report.models
        if m.set == which
    ]


def expected_rows(
    report: Report, rate_text: Callable[[Rate], str] = fmt_rate
) -> list[tuple[str, ...]]:
    """One row per expected bar; the table form passes a narrower rate."""
    return [
        (
            x.set,
            x.level,
            x.model,
            *subject_cells(report, x.variant, x.subject_hash),
            *factor_cells(report, x),
            x.polarity,
            x.verdict.upper(),
            x.bar_text,
            rate_text(x.observed),
        )
        for x in report.expected
    ]


def expected_columns(report: Report) -> tuple[str, ...]:
    factors = tuple(column for column, _ in _factors(report))
    return (
        *EXPECTED_COLUMNS[:3],
        *subject_cells(report, *SUBJECT_COLUMNS),
        *factors,
        *EXPECTED_COLUMNS[3:],
    )


def breach_line(report: Report) -> str:
    return (
        f"REAL-VAULT BREACH: {report.breaches} row(s) wrote into a guarded real-world path "
        "(see the BREACH column and each row's reasons)"
    )


def missing_lines(report: Report) -> list[str]:
    return report.grid_gaps + [
        f"{m.run_id} {m.scenario} {m.model}: {m.planned} rep(s) planned, {m.recorded} recorded"
        + (f", {m.skipped} {m.skip_reason}" if m.skipped else "")
        for m in report.missing
    ]


USAGE_COLUMNS = (
    "model",
    "attempts",
    "input tokens",
    "output tokens",
    "cache read",
    "cache write",
    "turns",
    "duration s",
    "cost USD (CLI estimate)",
)


def usage_rows(report: Report) -> list[tuple[str, ...]]:
    return [
        (
            u.model,
            str(u.attempts),
            str(u.input_tokens),
            str(u.output_tokens),
            str(u.cache_read_tokens),
            str(u.cache_write_tokens),
            str(u.turns),
            f"{u.duration_ms / 1000:.1f}",
            f"{u.cost_usd_estimate:.4f}",
        )
        for u in report.usage
    ]


def retry_line(report: Report) -> str:
    r = report.retries
    if not r.reps:
        return ""
    why = ", ".join(f"{reason} {n}" for reason, n in r.reasons.items())
    return f"{r.reps} rep(s) retried ({r.attempts} superseded attempt(s) kept): {why}"


def unknown_lines(report: Report) -> list[str]:
    return [
        f"{u.scenario} {u.model}: {u.rows} row(s) (PASS {u.passes}, FAIL {u.fails}, "
        f"ERROR {u.errors})"
        for u in report.unknown
    ]


def calibration_lead(report: Report) -> list[str]:
    """What a calibration folder's report opens with: how its cells came out, each cell that
    differs, and the rows that are ERROR by design."""
    if report.calibration is None:
        return []
    c = report.calibration
    return [c.headline, *(f"  {line}" for line in c.differ), *c.expected_errors]


def calibration_tail(report: Report) -> list[str]:
    """What it closes with in place of a publishability verdict: whether verify re-derived
    every row."""
    pub = report.publishability
    if len(pub.problems) > 1:
        return pub.problems
    return [*pub.problems, f"every row re-derived from its evidence (verified {pub.verified_at})"]


def _md_table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(columns), "|" + "---|" * len(columns)] + [line(r) for r in rows]


def to_markdown(report: Report) -> str:
    """GitHub-flavoured markdown: the same content as the table form, pasteable into an issue."""
    out = [f"# evalkit report: {report.suite}", ""]
    if report.calibration is not None:
        [headline, *rest] = calibration_lead(report)
        out += [f"**{headline}**", ""] + [f"- {line.strip()}" for line in rest] + [""]
    out.append(f"{report.rows} row(s) from {report.workdir}")
    out.append("")
    out += [f"- {which} set: {label}" for which, label in report.sets.items()]
    out += [f"- {line}" for line in subject_lines(report)[:1]]
    out += [f"  - {line.strip()}" for line in subject_lines(report)[1:]]
    out += [f"- {judge_line(report)}"] if report.judges else []
    out += [f"- {agent_line(report)}"] if agent_line(report) else []
    out.append("")
    out += [INTERVAL_NOTE, ""]
    if report.inner_loop:
        out += [f"**{inner_loop_line(report)}**", ""]
    if expected_misses(report):
        out += [f"**{expected_line(report)}**", ""]
    if report.breaches:
        out += [f"**{breach_line(report)}**", ""]
    if report.incomplete:
        out += ["## INCOMPLETE", ""] + [f"- {line}" for line in missing_lines(report)] + [""]
    for table in report.levels:
        out += [f"## {level_title(table, report.inner_loop)}", ""]
        out += _md_table(with_subject(report, LEVEL_COLUMNS), level_rows(table, report)) + [""]
    columns = INNER_MODEL_COLUMNS if report.inner_loop else MODEL_COLUMNS
    for which in SETS:
        rows = model_rows(report, which)
        if rows:
            out += [f"## {model_title(report, which)}", ""]
            out += _md_table(with_subject(report, columns), rows) + [""]
    earned = earned_rows(report)
    if earned:
        out += ["## How positives passed", "", EARNED_NOTE, ""]
        out += _md_table(with_subject(report, EARNED_COLUMNS), earned) + [""]
    if report.expected:
        out += [f"## {expected_title(report)}", "", EXPECTED_NOTE, ""]
        out += _md_table(expected_columns(report), expected_rows(report)) + [""]
    if report.usage:
        out += ["## Usage", ""] + _md_table(USAGE_COLUMNS, usage_rows(report)) + [""]
    if retry_line(report):
        out += [retry_line(report), ""]
    if report.unknown:
        out += ["## Unknown scenarios (no longer in the suite)", ""]
        out += [f"- {line}" for line in unknown_lines(report)] + [""]
    if report.unreadable:
        out += ["## Lines that did not read (skipped)", ""]
        out += [f"- {line}" for line in report.unreadable] + [""]
    if report.calibration is not None:
        out += [f"- {line}" for line in calibration_tail(report)]
    else:
        out.append(f"**{report.publishability.verdict}**")
    return "\n".join(out) + "\n"

"""The report's shape: what `evalkit report --json` writes and every form of it reads."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from evalkit.models import (
    Level,
    Model,
    Polarity,
    ScenarioSet,
)
from evalkit.records.verify.calibration import Calibration

REPORT_SCHEMA_VERSION = 2
"""2: a rate's `errors_as_pass`, a cell's `noise` (where its variance comes from)."""


Z95 = 1.96
"""The z of the report's rep-level intervals, as its pages have always shown them."""


LEVELS: tuple[Level, ...] = ("L1", "L2", "L3")


SETS: tuple[ScenarioSet, ...] = ("run", "reserve")


POLARITIES: tuple[Polarity, ...] = ("positive", "negative")


SubjectKey = tuple[str, str]


ModelKey = tuple[str, str, str, str, str]
"""model; the CLI version, the judge, the agent and the confinement backend, each where the
rows hold several (else empty)."""
"""variant, subject hash: the wording under test a row ran with."""


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
    errors_as_pass: float | None = Field(
        None,
        description="(k + errors) / n: the rate had every ERROR row passed, the far end of "
        "what the ERROR rows could change (the rows stay ERROR); null when n is 0",
    )
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


class Noise(Model):
    """Where a cell's noise comes from: a one-way random-effects ANOVA by scenario (method of
    moments, the between part truncated at 0), and what the next grid should buy."""

    scenarios: int = Field(description="G: the scenarios (groups)")
    mean_reps: float = Field(description="m̄: reps per scenario, on average")
    between: float = Field(description="between-scenario variance (which scenarios were drawn)")
    within: float = Field(description="within-scenario variance (rep to rep, same scenario)")
    icc: float | None = Field(description="between / (between + within); null with no spread")
    deff: float = Field(description="design effect 1 + (m̄ - 1)·ICC")
    effective_n: float = Field(description="reps / deff: as many independent reps")
    next_grid: str = Field(description="more scenarios or more reps: what each would narrow")


Variant = Annotated[str, Field(description="the subject's variant; 'suite': its own wording")]
SubjectHash = Annotated[str, Field(description="the subject's hash; empty when nothing says")]
CliVersion = Annotated[str, Field(description="the CLI version; empty unless rows ran several")]
Judge = Annotated[str, Field(description="the judge identity; empty unless rows hold several")]
Agent = Annotated[str, Field(description="the agent; empty unless rows hold several")]
Backend = Annotated[
    str, Field(description="the confinement backend; empty unless rows hold several")
]
"""The factors a cell and a model summary are split by, said once for both."""


class Cell(Model):
    """One model with one subject on one polarity at one level of one set."""

    model: str
    variant: Variant = "suite"
    subject_hash: SubjectHash = ""
    cli_version: CliVersion = ""
    judge: Judge = ""
    agent: Agent = ""
    backend: Backend = ""
    polarity: Polarity
    scenarios: list[str]
    pass_rate: Rate
    fails: int
    b_fail: int = Field(description="rows whose b column is B:FAIL")
    breaches: int = Field(0, description="rows naming a real-vault-breach, whatever the verdict")
    aware: int = Field(
        0, description="rows whose agent said it suspects a test (an `aware:` flag), of n"
    )
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
    noise: Noise | None = Field(
        None, description="where the noise comes from; null below two scenarios or one rep each"
    )


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
    variant: Variant = "suite"
    subject_hash: SubjectHash = ""
    cli_version: CliVersion = ""
    judge: Judge = ""
    agent: Agent = ""
    backend: Backend = ""
    recall: Rate = Field(description="PASS over positive rows")
    specificity: Rate = Field(description="PASS over negative rows")
    recall_noise: Noise | None = Field(None, description="where recall's noise comes from")
    specificity_noise: Noise | None = Field(
        None, description="where specificity's noise comes from"
    )


class SubjectRows(Model):
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
    backend: str = Field("", description="the confinement backend; empty unless rows hold several")
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


class Activation(Model):
    """One skill in one set, model and subject: fired when a user would want it, quiet when
    not (`records/report/activation.py` says which scenarios want which skill)."""

    set: ScenarioSet
    model: str
    variant: Variant = "suite"
    subject_hash: SubjectHash = ""
    cli_version: CliVersion = ""
    judge: Judge = ""
    agent: Agent = ""
    backend: Backend = ""
    skill: str = Field(description="plugin:skill, as the CLI names it")
    side: Literal["subject", "neighbour"]
    covers: str = Field("", description="a neighbour's `covers:` text; empty for the subject")
    when_wanted: Rate = Field(description="rows where it was wanted: PASS = it fired")
    quiet_when_not: Rate = Field(description="rows where it was not wanted: PASS = it did not")


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
    subjects: list[SubjectRows] = Field(default_factory=list)
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
    backends: dict[str, int] = Field(
        default_factory=dict,
        description="confinement backend -> rows it confined (bwrap, srt, docker, podman; none "
        "unconfined); rates are split by it when there are several",
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
    activation: list[Activation] = Field(
        default_factory=list,
        description="per skill of the subject and its neighbours: fired when wanted, quiet "
        "when not; empty for a suite without neighbours",
    )
    grid_gaps: list[str] = Field(
        default_factory=list,
        description="why a sharded grid in the folder is not whole: missing shards, shards cut "
        "with different N, a shard under two run ids",
    )
    unknown: list[UnknownScenario]
    usage: list[Usage] = Field(default_factory=list)
    retries: Retries = Field(default_factory=lambda: Retries(reps=0, attempts=0, reasons={}))
    rescored_rows: int = Field(
        0,
        description="rows replaced by a later `evalkit results rescore`: kept in the file, "
        "not counted",
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

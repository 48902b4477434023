"""`evalkit gate`: one exit code a CI job can act on, for B against A.

The order of the verdicts is the point: 2 (the comparison cannot be trusted) over 3 (this
design cannot show a regression at the chosen level) over 1 (a regression is shown, or B is
not shown within the margin) over 0. Each test is the exact one-sided sign-flip test over the
scenarios both sides ran, one per model pair and polarity, Holm-corrected over the family.
The gate reads each side's recorded verification; a side with no current record (none, a
stale one, or one edited since verify wrote it) is verified first, so a gate never trusts a
record that no longer means what verify found.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import Field

from evalkit import stats
from evalkit.compare.baseline import baseline_side
from evalkit.compare.sides import (
    Side,
    confounded,
    differing,
    load_side,
    other_backends,
    other_neighbours,
    pooled_agents,
    pooled_backends,
    pooled_subjects,
    unchosen_agents,
    with_scenarios,
)
from evalkit.errors import ConfigError, RefusedError
from evalkit.inference import sequential as seq
from evalkit.models import Model, Polarity, ResultRow, ScenarioSet
from evalkit.records.folder.imported import refuse_imported
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.build import build_report
from evalkit.records.report.model import Report
from evalkit.records.verify.record import verify_and_record
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile

GATE_SCHEMA_VERSION = 1
ALPHA = 0.05
MAX_ERRORS = 0.10
POLARITIES: tuple[Polarity, ...] = ("positive", "negative")
MEASURE = {"positive": "recall", "negative": "specificity"}
METHOD = (
    "exact one-sided sign-flip (Fisher-Pitman) test over paired per-scenario differences, "
    "Holm over model x polarity"
)
MARGIN_METHOD = (
    "one-sided score test of B within M of A, stratified by scenario (Farrington-Manning "
    "restricted rates, t on G - 1 df), Holm over model x polarity"
)
SUPERIORITY_METHOD = (
    "one-sided test of B - A > D: exact sign-flip of d_s - D (the stratified score test "
    f"below {stats.SIGN_FLIP_REPS} reps a side), every test at alpha (intersection-union)"
)
SEQUENTIAL_METHOD = (
    "anytime-valid one-sided e-process over paired reps in recorded order (mixture "
    "likelihood ratio of the discordant pairs' signs, Ville's inequality), Holm over "
    "model x polarity on its anytime p"
)
Decision = Literal[
    "regression",
    "not-within-margin",
    "underpowered",
    "no-regression",
    "within",
    "better",
    "not-better",
]
AGAINST_B: tuple[Decision, ...] = ("regression", "not-within-margin", "not-better")
Status = Literal["pass", "regression", "underpowered", "untrusted"]
EXIT = {"pass": 0, "regression": 1, "untrusted": 2, "underpowered": 3}


class Setting(Model):
    value: float
    source: str = Field(description="default, evalkit.yaml, or the CLI option that overrode it")


class Settings(Model):
    alpha: Setting
    margin: Setting
    max_errors: Setting
    min_delta: Setting = Setting(value=0.0, source="default")
    superiority: bool = Field(False, description="decide 'B better than A by more than D'")
    sequential: bool = Field(False, description="the anytime-valid test: look as often as you like")
    fail_on_bars: bool = False
    allow_backends: bool = Field(
        False, description="A and B may have run under different confinement backends"
    )
    aa_from: str = Field("", description="the A/A folder whose chance differences are refused")
    max_aware: float | None = Field(
        None, description="the largest share of a cell's rows flagged aware: (off when null)"
    )
    method: str = METHOD

    @property
    def floor(self) -> float | None:
        """D when the gate decides superiority, else None."""
        return self.min_delta.value if self.superiority else None


def settings_for(
    suite: Suite,
    alpha: float | None = None,
    margin: float | None = None,
    max_errors: float | None = None,
    fail_on_bars: bool = False,
    min_delta: float | None = None,
    superiority: bool = False,
    sequential: bool = False,
) -> Settings:
    """The gate's settings: the CLI's where given (labelled as overriding the suite's),
    else the suite's frozen `gate:` block, else the defaults. Superiority decides instead
    of a margin: asking for both is refused."""
    frozen = suite.config.gate

    def pick(name: str, given: float | None, stated: float | None, default: float) -> Setting:
        if given is not None:
            label = f"--{name.replace('_', '-')}"
            return Setting(
                value=given,
                source=f"{label} (overrides evalkit.yaml)" if stated is not None else label,
            )
        if stated is not None:
            return Setting(value=stated, source="evalkit.yaml")
        return Setting(value=default, source="default")

    if superiority and margin:
        raise ConfigError("gate: --superiority decides 'better by more than D'; drop --margin")
    if min_delta is not None and not superiority:
        raise ConfigError("gate: --min-delta is the floor of --superiority; add --superiority "
                          "or drop --min-delta")  # fmt: skip
    if sequential and (superiority or margin):
        raise ConfigError("gate: --sequential decides a regression only; drop --margin")
    chosen_margin = pick("margin", None if superiority else margin, frozen.margin, 0.0)
    if superiority:
        chosen_margin = Setting(value=0.0, source="unused under --superiority")
    method = MARGIN_METHOD if chosen_margin.value else METHOD
    return Settings(
        alpha=pick("alpha", alpha, frozen.alpha, ALPHA),
        margin=chosen_margin,
        max_errors=pick("max_errors", max_errors, frozen.max_errors, MAX_ERRORS),
        min_delta=pick("min_delta", min_delta, frozen.min_delta, 0.0),
        superiority=superiority,
        sequential=sequential,
        fail_on_bars=fail_on_bars,
        method=SEQUENTIAL_METHOD if sequential else SUPERIORITY_METHOD if superiority else method,
    )


class Tally(Model):
    k: int = Field(description="PASS rows")
    n: int = Field(description="PASS + FAIL + ERROR rows")
    errors: int = Field(description="ERROR rows, inside n")


class Pair(Model):
    """One scenario both sides ran, and B's rate minus A's."""

    scenario: str
    path: str = Field(description="the scenario file, relative to the suite")
    set: ScenarioSet
    a: Tally
    b: Tally
    difference: float = Field(description="k_B/n_B - k_A/n_A; an ERROR is not a pass")
    bounds: list[float] = Field(
        default_factory=list,
        description="the difference with B's ERROR rows non-passes and A's passes, then the "
        "reverse: how far the ERROR rows could move it",
    )


class Test(Model):
    """One (model pair, polarity) decision."""

    model_a: str
    model_b: str
    variants: str = Field(description="A's variant -> B's variant")
    polarity: Polarity
    measure: str
    scenarios: int = Field(description="G: scenarios both sides ran, run and reserve pooled")
    only_a: list[str] = Field(default_factory=list, description="scenarios only A ran")
    only_b: list[str] = Field(default_factory=list, description="scenarios only B ran")
    mean_difference: float | None
    p_value: float | None = Field(
        description="one-sided: against 'B is worse', or with a margin, for 'B within M of A'"
    )
    level: float | None = Field(None, description="Holm's level this test was held to")
    floor: float = Field(description="the smallest p G pairs can reach: 1 / 2^G")
    needed: int = Field(description="the G this family needs: ⌈log₂(m / alpha)⌉")
    decision: Decision
    at_error_bounds: list[Decision] = Field(
        default_factory=list,
        description="the decision at each end of `bounds` (ERROR rows against B, then for B); "
        "empty when no pair holds an ERROR row",
    )
    test_used: str = Field("", description="superiority: sign-flip or score")
    e_value: float | None = Field(
        None, description="--sequential: the e-process's running maximum (its p is 1 / it)"
    )
    discordant: int | None = Field(
        None, description="--sequential: paired reps where one side passed and the other not"
    )
    signs: list[int] = Field(default_factory=list, exclude=True)
    against_b: list[str] = Field(description="scenarios with d_s < 0")
    pairs: list[Pair]

    @property
    def name(self) -> str:
        models = self.model_a if self.model_a == self.model_b else f"{self.model_a}->{self.model_b}"
        return f"{self.measure} {models} {self.variants}"


class Cause(Model):
    """Why the comparison cannot be trusted (exit 2)."""

    token: str = Field(
        description="not-publishable, errors, errors-decide, error-rates-differ, confounded, "
        "incomplete, aware"
    )
    side: str = Field(description="A, B or both")
    detail: str


class Bar(Model):
    cell: str = Field(description="set/level/polarity/model/variant")
    bar: str = Field(description="the stated bar: >= min, <= max, or min-max")
    k: int
    n: int
    verdict: str = Field(description="met, unclear or miss")


class Verdict(Model):
    schema_version: int = GATE_SCHEMA_VERSION
    suite: str
    a: str = Field(description="A's results folder and selector")
    b: str = Field(description="B's results folder and selector")
    status: Status
    exit_code: int
    line: str = Field(description="the one line that states the verdict, naming its cells")
    reasons: list[str] = Field(description="reason tokens behind the exit code")
    settings: Settings
    tests_in_family: int
    error_rates_p: float | None = Field(
        None, description="two-sided Fisher exact p of A's ERROR share against B's, all rows"
    )
    causes: list[Cause]
    tests: list[Test]
    bars: list[Bar]
    unknown: list[str] = Field(
        default_factory=list, description="scenarios no longer in the suite, left out"
    )


# --------------------------------------------------------------------------- pairing


def _tally(rows: list[ResultRow]) -> Tally:
    return Tally(
        k=sum(1 for r in rows if r.verdict == "PASS"),
        n=len(rows),
        errors=sum(1 for r in rows if r.verdict == "ERROR"),
    )


def _model_pairs(a: Side, b: Side) -> list[tuple[str, str]]:
    ma, mb = sorted({r.model for r in a.rows}), sorted({r.model for r in b.rows})
    if ma == mb:
        return [(m, m) for m in ma]
    if len(ma) == 1 and len(mb) == 1:
        return [(ma[0], mb[0])]
    raise RefusedError(
        f"gate: A holds models {', '.join(ma)} and B {', '.join(mb)}; they pair only when both "
        "hold the same models or one each; narrow them with --a/--b model:NAME"
    )


Grouped = dict[tuple[str, Polarity], dict[str, list[ResultRow]]]


def _group(
    suite: Suite, side: Side, known: dict[str, ScenarioFile | None], unknown: set[str]
) -> Grouped:
    found: Grouped = {}
    for row, sf in with_scenarios(suite, side.rows, unknown, known):
        key = (row.model, sf.scenario.polarity)
        found.setdefault(key, {}).setdefault(sf.id, []).append(row)
    return found


def _path(suite: Suite, sf: ScenarioFile) -> str:
    try:
        return sf.path.resolve().relative_to(suite.root.resolve()).as_posix()
    except ValueError:
        return sf.path.name


def _variants(side: Side) -> str:
    return "+".join(sorted({side.variant(r) for r in side.rows}))


def _passes(rows: list[ResultRow]) -> list[int]:
    """A scenario's outcomes in the order its rows were recorded: 1 a PASS."""
    return [int(r.verdict == "PASS") for r in rows]


def _pair(
    suite: Suite, sf: ScenarioFile, scenario: str, a: list[ResultRow], b: list[ResultRow]
) -> Pair:
    ta, tb = _tally(a), _tally(b)
    bounds = stats.difference_bounds((tb.k, tb.errors, tb.n), (ta.k, ta.errors, ta.n))
    return Pair(
        scenario=scenario,
        path=_path(suite, sf),
        set=sf.scenario.set,
        a=ta,
        b=tb,
        difference=float(Fraction(tb.k, tb.n) - Fraction(ta.k, ta.n)),
        bounds=list(bounds or ()),
    )


def paired_tests(suite: Suite, a: Side, b: Side, unknown: set[str]) -> list[Test]:
    """The family: one test per model pair and polarity that either side ran, undecided."""
    known: dict[str, ScenarioFile | None] = {}
    ga, gb = _group(suite, a, known, unknown), _group(suite, b, known, unknown)
    variants = f"{_variants(a)}->{_variants(b)}"
    found = []
    for model_a, model_b in _model_pairs(a, b):
        for polarity in POLARITIES:
            sa, sb = ga.get((model_a, polarity), {}), gb.get((model_b, polarity), {})
            if not sa and not sb:
                continue
            shared = sorted(set(sa) & set(sb))
            pairs = []
            for scenario in shared:
                sf = known[sa[scenario][0].scenario]
                assert sf is not None
                pairs.append(_pair(suite, sf, scenario, sa[scenario], sb[scenario]))
            found.append(
                Test(
                    model_a=model_a,
                    model_b=model_b,
                    variants=variants,
                    polarity=polarity,
                    measure=MEASURE[polarity],
                    scenarios=len(shared),
                    only_a=sorted(set(sa) - set(sb)),
                    only_b=sorted(set(sb) - set(sa)),
                    mean_difference=(
                        sum(p.difference for p in pairs) / len(pairs) if pairs else None
                    ),
                    p_value=None,
                    floor=stats.one_sided_floor(len(shared)),
                    needed=0,
                    decision="underpowered",
                    against_b=[p.scenario for p in pairs if p.difference < 0],
                    pairs=pairs,
                    signs=seq.paired_signs(
                        [_passes(sa[s]) for s in shared], [_passes(sb[s]) for s in shared]
                    ),
                )
            )
    return found


def _p_value(test: Test, margin: float, floor: float | None) -> float | None:
    """The test's one-sided p: against exchangeable for "B is worse", for "B within M of A"
    with a margin, or for "B - A > D" under superiority."""
    cells = [(p.b.k, p.b.n, p.a.k, p.a.n) for p in test.pairs]
    if floor is not None:
        p, test.test_used = stats.superiority_p(cells, floor)
        return p
    if margin:
        return stats.within_margin_p(cells, margin)
    diffs = [Fraction(p.b.k, p.b.n) - Fraction(p.a.k, p.a.n) for p in test.pairs]
    return stats.sign_flip_lower_p(diffs)


def decide(tests: list[Test], alpha: float, margin: float, floor: float | None = None) -> None:
    """Each test's p, Holm's verdict over the family, and its decision, in place.

    Without a margin a test rejects "A and B are exchangeable" for "B is worse". With a
    margin M it asks "B is within M of A" of a score test stratified by scenario (a sign-flip
    test of d_s + M over-rejects at few reps), and a test that fails to show it decides
    against B. Under superiority (`floor` D) B passes only where every test shows B - A > D,
    each at alpha: an intersection-union test needs no correction (Berger 1982)."""
    m = len(tests)
    needed = stats.pairs_needed(1 if floor is not None else max(m, 1), alpha)
    p_values = []
    for test in tests:
        test.needed = needed
        p = _p_value(test, margin, floor)
        test.p_value = p
        p_values.append(1.0 if p is None else p)
    if floor is not None:
        for test, p in zip(tests, p_values, strict=True):
            test.level = alpha
            shown = p <= alpha
            if test.p_value is None or (test.test_used == "sign-flip" and test.scenarios < needed):
                test.decision = "underpowered"
            else:
                test.decision = "better" if shown else "not-better"
        return
    rejected = stats.holm(p_values, alpha)
    order = sorted(range(m), key=lambda i: p_values[i])
    for step, index in enumerate(order):
        test = tests[index]
        test.level = alpha / (m - step)
        if test.scenarios < needed:
            test.decision = "underpowered"
        elif margin:
            test.decision = "within" if rejected[index] else "not-within-margin"
        else:
            test.decision = "regression" if rejected[index] else "no-regression"


def decide_sequential(tests: list[Test], alpha: float) -> None:
    """Each test's e-process over its paired reps, its anytime p, and Holm over the family,
    in place. A test whose paired reps could not reach its level even were every one
    discordant against B is underpowered."""
    m = len(tests)
    p_values = []
    for test in tests:
        found = seq.path(test.signs)
        test.e_value = max([1.0, *found])
        test.discordant = len(found)
        test.p_value = seq.anytime_p(test.signs)
        p_values.append(test.p_value)
    rejected = stats.holm(p_values, alpha)
    for step, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        test = tests[index]
        test.level = alpha / (m - step)
        test.needed = seq.pairs_to_decide(test.level)
        if rejected[index]:
            test.decision = "regression"
        elif len(test.signs) < test.needed:
            test.decision = "underpowered"
        else:
            test.decision = "no-regression"


def _shifted(test: Test, for_b: bool) -> Test:
    """The test with its ERROR rows counted as passes on one side: A's (against B) or B's."""
    copy = test.model_copy(deep=True)
    for pair in copy.pairs:
        side = pair.b if for_b else pair.a
        side.k += side.errors
    return copy


def decide_error_bounds(tests: list[Test], settings: Settings) -> list[Cause]:
    """Each test decided again at both ends of what its ERROR rows allow, and the causes
    that make the comparison untrustworthy: a decision the ERROR rows could change, and ERROR
    shares that differ between the arms (so the arms did not fail alike)."""
    alpha, margin = settings.alpha.value, settings.margin.value
    if not any(p.a.errors or p.b.errors for t in tests for p in t.pairs):
        return []
    ends = [[_shifted(t, for_b) for t in tests] for for_b in (False, True)]
    for family in ends:
        decide(family, alpha, margin, settings.floor)
    causes = []
    for test, against, for_b in zip(tests, ends[0], ends[1], strict=True):
        test.at_error_bounds = [against.decision, for_b.decision]
        if against.decision != for_b.decision:
            low, high = (sum(p.bounds[i] for p in test.pairs) / len(test.pairs) for i in (0, 1))
            causes.append(
                Cause(
                    token="errors-decide",
                    side="both",
                    detail=f"{test.name}: the ERROR rows decide it: {against.decision} with "
                    f"them against B (mean B-A {low:+.3f}), {for_b.decision} with them for B "
                    f"({high:+.3f})",
                )
            )
    return causes


def error_rates_cause(a: Side, b: Side, alpha: float) -> tuple[float | None, list[Cause]]:
    """The exact test of the arms' ERROR shares (two-sided Fisher over every row), and the
    cause it gives when it rejects at alpha."""
    ea = sum(1 for r in a.rows if r.verdict == "ERROR")
    eb = sum(1 for r in b.rows if r.verdict == "ERROR")
    if not ea and not eb:
        return None, []
    p = stats.fisher_exact(ea, len(a.rows), eb, len(b.rows))
    if p is None or p > alpha:
        return p, []
    detail = (
        f"ERROR rows A {ea}/{len(a.rows)}, B {eb}/{len(b.rows)}: the arms' ERROR shares "
        f"differ (Fisher exact p = {p:.3g} <= {alpha:g})"
    )
    return p, [Cause(token="error-rates-differ", side="both", detail=detail)]


# --------------------------------------------------------------------------- trust


def _side_name(side: Side) -> str:
    chosen = f" {side.selector}" if side.selector else ""
    return f"{side.workdir}{chosen}" + (" (the baseline)" if side.baseline else "")


def trust_causes(
    suite: Suite,
    a: Side,
    b: Side,
    reports: dict[str, Report],
    max_errors: float,
    allow_confounded: bool,
    allow_backends: bool = False,
) -> list[Cause]:
    """Everything that makes the comparison untrustworthy, each named once."""
    causes = [
        cause
        for label, side in (("A", a), ("B", b))
        for cause in _side_causes(label, side, reports[label], max_errors)
    ]
    differ = differing(a, b)
    if confounded(differ) and not allow_confounded:
        causes.append(
            Cause(
                token="confounded",
                side="both",
                detail=f"A and B differ in {', '.join(differ)}; pass --allow-confounded to gate "
                "anyway",
            )
        )
    neighbours = other_neighbours(a, b, differ)
    if neighbours is not None:
        causes.append(Cause(token="confounded", side="both", detail=neighbours))
    unchosen = unchosen_agents(a, b, differ)
    if unchosen is not None and not allow_confounded:
        causes.append(Cause(token="confounded", side="both", detail=unchosen))
    for side in (a, b):
        for why in (pooled_subjects(side), pooled_agents(side)):
            if why is not None and not allow_confounded:
                causes.append(Cause(token="confounded", side=side.label, detail=why))
    if allow_backends:
        return causes
    backends = other_backends(a, b, differ, allowed=False)
    if backends is not None:
        causes.append(Cause(token="confounded", side="both", detail=backends))
    for side in (a, b):
        if (why := pooled_backends(side)) is not None:
            causes.append(Cause(token="confounded", side=side.label, detail=why))
    return causes


def aware_causes(reports: dict[str, Report], max_aware: float | None) -> list[Cause]:
    """Each cell whose share of rows with an agent that said it suspects a test is above
    `max_aware`: what it measured may not be what an unsuspecting agent does."""
    if max_aware is None:
        return []
    causes = []
    for label, report in reports.items():
        for table in report.levels:
            for c in table.cells:
                n = c.pass_rate.n
                if n and c.aware / n > max_aware:
                    causes.append(Cause(token="aware", side=label, detail=(
                        f"{label}: {c.aware} of {n} rows of {c.model} {table.set} "
                        f"{table.level or table.kind or '-'} {c.polarity} said they suspect a "
                        f"test ({c.aware / n:.0%} > {max_aware:.0%})"
                    )))  # fmt: skip
    return causes


def _side_causes(label: str, side: Side, report: Report, max_errors: float) -> list[Cause]:
    """One side's own causes: not publishable, incomplete, too many ERROR rows."""
    causes = []
    if not report.publishability.publishable:
        causes.append(
            Cause(
                token="not-publishable",
                side=label,
                detail=f"{label} {side.workdir}: {report.publishability.verdict}",
            )
        )
    if report.incomplete:
        gaps = sorted({f"{m.scenario} {m.model}" for m in report.missing})
        causes.append(
            Cause(
                token="incomplete",
                side=label,
                detail=f"{label}: planned reps with no row: {', '.join(gaps)}",
            )
        )
    errors = sum(1 for r in side.rows if r.verdict == "ERROR")
    if side.rows and errors / len(side.rows) > max_errors:
        where = sorted({r.scenario for r in side.rows if r.verdict == "ERROR"})
        causes.append(
            Cause(
                token="errors",
                side=label,
                detail=(
                    f"{label}: {errors} of {len(side.rows)} rows are ERROR "
                    f"({errors / len(side.rows):.0%} > {max_errors:.0%}): {', '.join(where)}"
                ),
            )
        )
    return causes


def _bars(report: Report, side: Side) -> list[Bar]:
    """B's expected bars, of the cells its rows belong to (a cell split by agent or judge
    names its own)."""
    models = {r.model for r in side.rows}
    variants = {side.variant(r) for r in side.rows}
    factors = side.factor_values()
    return [
        Bar(
            cell=f"{c.set}/{c.level}/{c.polarity}/{c.model}/{c.variant}",
            bar=c.bar_text,
            k=c.observed.k,
            n=c.observed.n,
            verdict=c.verdict,
        )
        for c in report.expected
        if c.model in models
        and c.variant in variants
        and c.agent in {"", *factors["agent"]}
        and c.judge in {"", *factors["judge"]}
    ]


# --------------------------------------------------------------------------- the verdict


def _underpowered(t: Test, settings: Settings, m: int) -> str:
    if settings.sequential:
        return (
            f"{t.name}: {len(t.signs)} paired reps cannot reach {t.level:.3g}, which takes "
            f"{t.needed} discordant against B"
        )
    alpha = settings.alpha.value
    return (
        f"{t.name} has G = {t.scenarios} ({', '.join(p.scenario for p in t.pairs) or 'none'})"
        f": floor 1/2^{t.scenarios} = {t.floor:.3g} > alpha/m = "
        f"{(alpha if settings.superiority else alpha / m):.3g}, {t.needed} scenarios needed"
    )


def _against_part(t: Test, settings: Settings) -> str:
    """What a test that decided against B says in the verdict line; empty for any other."""
    if t.decision == "regression":
        return (
            f"{t.name}: p = {t.p_value:.3g} <= {t.level:.3g} (Holm); against B: "
            f"{', '.join(t.against_b)}"
        )
    if t.decision == "not-better":
        return (
            f"{t.name}: not shown better by more than {settings.min_delta.value:g} "
            f"(p = {t.p_value:.3g} > {t.level:.3g}, {t.test_used} test)"
        )
    if t.decision == "not-within-margin":
        return (
            f"{t.name}: not shown within {settings.margin.value:g} of A (p = {t.p_value:.3g} > "
            f"{t.level:.3g}); against B: {', '.join(t.against_b) or 'none'}"
        )
    return ""


def _line(
    status: Status,
    verdict_tests: list[Test],
    causes: list[Cause],
    settings: Settings,
    missed: list[Bar],
) -> str:
    alpha, margin, fail_on_bars = (
        settings.alpha.value,
        settings.margin.value,
        settings.fail_on_bars,
    )
    m = len(verdict_tests)
    if status == "untrusted":
        return "gate: cannot be trusted: " + "; ".join(c.detail for c in causes)
    if status == "underpowered":
        parts = [
            _underpowered(t, settings, m) for t in verdict_tests if t.decision == "underpowered"
        ]
        if not verdict_tests:
            return "gate: underpowered: no scenario of a model on both sides to test"
        return "gate: underpowered: " + "; ".join(parts)
    if status == "regression":
        parts = [part for t in verdict_tests if (part := _against_part(t, settings))]
        if fail_on_bars:
            parts += [
                f"bar-missed:{bar.cell} ({bar.k}/{bar.n} against {bar.bar})" for bar in missed
            ]
        return "gate: regression: " + "; ".join(parts)
    if settings.superiority:
        return (
            f"gate: pass: B shown better than A by more than {settings.min_delta.value:g} "
            f"on all {m} test(s)"
        )
    if margin:
        return f"gate: pass: B shown within {margin:g} of A on all {m} test(s)"
    need = stats.pairs_needed(max(m, 1), alpha)
    sizes = "; ".join(
        f"{t.measure} {t.model_b}: shown only if >= {need} of {t.scenarios} scenarios move "
        "against B"
        for t in verdict_tests
    )
    return f"gate: pass: no regression shown ({sizes})"


def verified_report(suite: Suite, workdir: Path) -> Report:
    """The folder's report, after `verify` re-derived it when its verification record is
    missing, stale or does not read (a calibration folder is never published: left as is)."""
    report = build_report(suite, workdir)
    stale = report.publishability.verification != "fresh"
    if stale and report.calibration is None and Workdir(workdir).has_evidence_index():
        verify_and_record(suite, workdir)
        report = build_report(suite, workdir)
    return report


def below_aa_noise(suite: Suite, tests: list[Test], folder: Path, alpha: float) -> list[Cause]:
    """A difference the gate would act on (a regression or 'better' shown) whose size is below
    the A/A folder's 95th percentile of chance differences for the same measure (and model,
    where the A/A run has it; else the largest over its models)."""
    from evalkit.compare.aa import aa_report

    found = aa_report(suite, folder, alpha=alpha).tests
    causes = []
    for test in tests:
        if test.decision not in ("regression", "better") or test.mean_difference is None:
            continue
        same = [t.p95 for t in found if t.polarity == test.polarity]
        mine = [t.p95 for t in found if t.polarity == test.polarity and t.model == test.model_b]
        floor = max(mine or same or [0.0])
        if abs(test.mean_difference) < floor:
            causes.append(
                Cause(
                    token="below-aa-noise",
                    side="both",
                    detail=f"{test.name}: |B-A| {abs(test.mean_difference):.3f} is below the "
                    f"A/A run's 95th percentile of chance, {floor:.3f} ({folder})",
                )
            )
    return causes


def gate(
    suite: Suite, a: Side, b: Side, settings: Settings, allow_confounded: bool = False
) -> Verdict:
    """B against A: the causes that make the comparison untrustworthy, the family of paired
    tests, the expected bars of B, and the one exit code they come to."""
    reports = {"A": verified_report(suite, a.workdir), "B": verified_report(suite, b.workdir)}
    causes = trust_causes(
        suite, a, b, reports, settings.max_errors.value, allow_confounded,
        settings.allow_backends,
    )  # fmt: skip
    causes += aware_causes(reports, settings.max_aware)
    unknown: set[str] = set()
    tests = paired_tests(suite, a, b, unknown)
    alpha, margin = settings.alpha.value, settings.margin.value
    if settings.sequential:
        decide_sequential(tests, alpha)
    else:
        decide(tests, alpha, margin, settings.floor)
        causes += decide_error_bounds(tests, settings)
    error_p, differ = error_rates_cause(a, b, alpha)
    causes += differ
    if settings.aa_from:
        causes += below_aa_noise(suite, tests, Path(settings.aa_from), alpha)
    bars = _bars(reports["B"], b)
    missed = [bar for bar in bars if bar.verdict == "miss"]
    reasons = [f"untrusted:{c.token}:{c.side}" for c in causes]
    status: Status
    if causes:
        status = "untrusted"
    elif not tests or any(t.decision == "underpowered" for t in tests):
        status = "underpowered"
        reasons.append("underpowered")
    elif any(t.decision in AGAINST_B for t in tests) or (settings.fail_on_bars and missed):
        status = "regression"
        reasons += sorted({t.decision for t in tests if t.decision in AGAINST_B})
    else:
        status = "pass"
    if settings.fail_on_bars:
        reasons += [f"bar-missed:{bar.cell}" for bar in missed]
    return Verdict(
        suite=suite.name,
        a=_side_name(a),
        b=_side_name(b),
        status=status,
        exit_code=EXIT[status],
        line=_line(status, tests, causes, settings, missed),
        reasons=reasons,
        settings=settings,
        tests_in_family=len(tests),
        error_rates_p=error_p,
        causes=causes,
        tests=tests,
        bars=bars,
        unknown=sorted(unknown),
    )


def choose_sides(
    suite: Suite, first: Path, second: Path | None, a: str = "", b: str = ""
) -> tuple[Side, Side]:
    """A and B as `compare` takes them: two folders, one folder and two selectors, or one
    folder against the suite's recorded baseline."""
    if second is None and a and not b:
        raise ConfigError("gate: --a within one folder needs --b too")
    side_a = baseline_side(suite) if second is None and not a else load_side("A", first, a)
    side_b = load_side("B", second or first, b)
    for side in (side_a, side_b):
        refuse_imported(side.workdir, "gate")
    return side_a, side_b

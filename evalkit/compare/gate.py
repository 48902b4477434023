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
    pooled_agents,
    pooled_subjects,
    unchosen_agents,
    with_scenarios,
)
from evalkit.errors import ConfigError, RefusedError
from evalkit.models import Model, Polarity, ResultRow, ScenarioSet
from evalkit.records.report import build_report
from evalkit.records.report_model import Report
from evalkit.records.verification import verify_and_record
from evalkit.records.workdir import Workdir
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
Decision = Literal["regression", "not-within-margin", "underpowered", "no-regression", "within"]
Status = Literal["pass", "regression", "underpowered", "untrusted"]
EXIT = {"pass": 0, "regression": 1, "untrusted": 2, "underpowered": 3}


class Setting(Model):
    value: float
    source: str = Field(description="default, evalkit.yaml, or the CLI option that overrode it")


class Settings(Model):
    alpha: Setting
    margin: Setting
    max_errors: Setting
    fail_on_bars: bool = False
    method: str = METHOD


def settings_for(
    suite: Suite,
    alpha: float | None = None,
    margin: float | None = None,
    max_errors: float | None = None,
    fail_on_bars: bool = False,
) -> Settings:
    """The gate's settings: the CLI's where given (labelled as overriding the suite's),
    else the suite's frozen `gate:` block, else the defaults."""
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

    chosen_margin = pick("margin", margin, frozen.margin, 0.0)
    return Settings(
        alpha=pick("alpha", alpha, frozen.alpha, ALPHA),
        margin=chosen_margin,
        max_errors=pick("max_errors", max_errors, frozen.max_errors, MAX_ERRORS),
        fail_on_bars=fail_on_bars,
        method=MARGIN_METHOD if chosen_margin.value else METHOD,
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
    against_b: list[str] = Field(description="scenarios with d_s < 0")
    pairs: list[Pair]

    @property
    def name(self) -> str:
        models = self.model_a if self.model_a == self.model_b else f"{self.model_a}->{self.model_b}"
        return f"{self.measure} {models} {self.variants}"


class Cause(Model):
    """Why the comparison cannot be trusted (exit 2)."""

    token: str = Field(description="not-publishable, errors, confounded, incomplete")
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
                ta, tb = _tally(sa[scenario]), _tally(sb[scenario])
                pairs.append(
                    Pair(
                        scenario=scenario,
                        path=_path(suite, sf),
                        set=sf.scenario.set,
                        a=ta,
                        b=tb,
                        difference=float(Fraction(tb.k, tb.n) - Fraction(ta.k, ta.n)),
                    )
                )
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
                )
            )
    return found


def decide(tests: list[Test], alpha: float, margin: float) -> None:
    """Each test's p, Holm's verdict over the family, and its decision, in place.

    Without a margin a test rejects "A and B are exchangeable" for "B is worse". With a
    margin M it asks "B is within M of A" of a score test stratified by scenario (a sign-flip
    test of d_s + M over-rejects at few reps), and a test that fails to show it decides
    against B."""
    m = len(tests)
    needed = stats.pairs_needed(max(m, 1), alpha)
    p_values = []
    for test in tests:
        test.needed = needed
        if margin:
            cells = [(p.b.k, p.b.n, p.a.k, p.a.n) for p in test.pairs]
            p = stats.within_margin_p(cells, margin)
        else:
            diffs = [Fraction(p.b.k, p.b.n) - Fraction(p.a.k, p.a.n) for p in test.pairs]
            p = stats.sign_flip_lower_p(diffs)
        test.p_value = p
        p_values.append(1.0 if p is None else p)
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
    unchosen = unchosen_agents(a, b, differ)
    if unchosen is not None and not allow_confounded:
        causes.append(Cause(token="confounded", side="both", detail=unchosen))
    for side in (a, b):
        for why in (pooled_subjects(side), pooled_agents(side)):
            if why is not None and not allow_confounded:
                causes.append(Cause(token="confounded", side=side.label, detail=why))
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


def _line(
    status: Status,
    verdict_tests: list[Test],
    causes: list[Cause],
    alpha: float,
    margin: float,
    missed: list[Bar],
    fail_on_bars: bool,
) -> str:
    m = len(verdict_tests)
    if status == "untrusted":
        return "gate: cannot be trusted: " + "; ".join(c.detail for c in causes)
    if status == "underpowered":
        parts = [
            f"{t.name} has G = {t.scenarios} ({', '.join(p.scenario for p in t.pairs) or 'none'})"
            f": floor 1/2^{t.scenarios} = {t.floor:.3g} > alpha/m = {alpha / m:.3g}, "
            f"{t.needed} scenarios needed"
            for t in verdict_tests
            if t.decision == "underpowered"
        ]
        if not verdict_tests:
            return "gate: underpowered: no scenario of a model on both sides to test"
        return "gate: underpowered: " + "; ".join(parts)
    if status == "regression":
        parts = []
        for t in verdict_tests:
            if t.decision == "regression":
                parts.append(
                    f"{t.name}: p = {t.p_value:.3g} <= {t.level:.3g} (Holm); against B: "
                    f"{', '.join(t.against_b)}"
                )
            elif t.decision == "not-within-margin":
                parts.append(
                    f"{t.name}: not shown within {margin:g} of A (p = {t.p_value:.3g} > "
                    f"{t.level:.3g}); against B: {', '.join(t.against_b) or 'none'}"
                )
        if fail_on_bars:
            parts += [
                f"bar-missed:{bar.cell} ({bar.k}/{bar.n} against {bar.bar})" for bar in missed
            ]
        return "gate: regression: " + "; ".join(parts)
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


def gate(
    suite: Suite, a: Side, b: Side, settings: Settings, allow_confounded: bool = False
) -> Verdict:
    """B against A: the causes that make the comparison untrustworthy, the family of paired
    tests, the expected bars of B, and the one exit code they come to."""
    reports = {"A": verified_report(suite, a.workdir), "B": verified_report(suite, b.workdir)}
    causes = trust_causes(suite, a, b, reports, settings.max_errors.value, allow_confounded)
    unknown: set[str] = set()
    tests = paired_tests(suite, a, b, unknown)
    alpha, margin = settings.alpha.value, settings.margin.value
    decide(tests, alpha, margin)
    bars = _bars(reports["B"], b)
    missed = [bar for bar in bars if bar.verdict == "miss"]
    reasons = [f"untrusted:{c.token}:{c.side}" for c in causes]
    status: Status
    if causes:
        status = "untrusted"
    elif not tests or any(t.decision == "underpowered" for t in tests):
        status = "underpowered"
        reasons.append("underpowered")
    elif any(t.decision in ("regression", "not-within-margin") for t in tests) or (
        settings.fail_on_bars and missed
    ):
        status = "regression"
        reasons += sorted(
            {t.decision for t in tests if t.decision in ("regression", "not-within-margin")}
        )
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
        line=_line(status, tests, causes, alpha, margin, missed, settings.fail_on_bars),
        reasons=reasons,
        settings=settings,
        tests_in_family=len(tests),
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
    return side_a, load_side("B", second or first, b)

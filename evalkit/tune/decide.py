"""What a round of `tune` decides, with the gate's own statistics.

A candidate wording is accepted only when two things are shown on the run set: it is better
than the incumbent on the polarity that failed (the gate's one-sided superiority test, floor
`--min-delta`), and it is within `--margin` of the incumbent on the other (the gate's margin
test, Holm over the family of both polarities, as `gate --margin` decides it). Both must
hold, so each is held to alpha (an intersection-union test). The reserve confirms the best
wording against the baseline by the same rule, and the degradation check asks the gate's
regression test whether the run set is now worse than the baseline.

The size a set needs is worked out from the same functions: the margin family's fewest
scenarios (⌈log₂(m / alpha)⌉), and the fewest scenarios at which a candidate that passes
every rep where the incumbent passes every rep can be shown within the margin at the reps
asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalkit import stats
from evalkit.compare.gate import ALPHA, POLARITIES, Test, Verdict, decide, gate, settings_for
from evalkit.compare.sides import Side
from evalkit.models import Polarity
from evalkit.suite.config import Suite

MAX_SCENARIOS = 200
"""Beyond this many scenarios a polarity, the size search gives up: no suite is that large."""


@dataclass
class RoundVerdict:
    """A candidate against the incumbent (or the best wording against the baseline)."""

    code: int
    """0 accepted (confirmed), 1 rejected (worse or not shown better), 2 untrusted,
    3 cannot tell at this size."""
    reason: str
    delta: float | None = None
    """The mean paired difference on the failing polarity, candidate minus incumbent."""
    interval: tuple[float, float] | None = None
    tests: list[Test] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.code == 0


def other(polarity: Polarity) -> Polarity:
    return "negative" if polarity == "positive" else "positive"


def needed_scenarios(models: int, alpha: float, reps: int, margin: float) -> int:
    """The fewest scenarios a polarity of a set needs for a round's tests to decide: the
    margin family's sign-flip floor over models x polarities, and the margin test's own
    reach at `reps` reps a side when both sides pass every rep."""
    floor = stats.pairs_needed(max(1, models) * len(POLARITIES), alpha)
    level = alpha  # the guard's test, Holm's last step when the failing polarity rejects
    for g in range(floor, MAX_SCENARIOS + 1):
        p = stats.within_margin_p([(reps, reps, reps, reps)] * g, margin)
        if p is not None and p <= level:
            return g
    return MAX_SCENARIOS + 1


def paired_interval(test: Test) -> tuple[float, float] | None:
    """The mean of the per-scenario differences with its 95% t interval over scenarios."""
    diffs = [p.difference for p in test.pairs]
    if len(diffs) < 2:
        return None
    mean = sum(diffs) / len(diffs)
    var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    half = stats.t_quantile(0.975, len(diffs) - 1) * (var / len(diffs)) ** 0.5
    return mean - half, mean + half


def judge(
    suite: Suite, a: Side, b: Side, failing: Polarity, margin: float, min_delta: float,
    alpha: float = ALPHA,
) -> RoundVerdict:  # fmt: skip
    """B (the candidate) against A: the gate's trust causes and margin family first, then the
    superiority test on the failing polarity."""
    settings = settings_for(suite, alpha=alpha, margin=margin)
    verdict = gate(suite, a, b, settings)
    return decide_round(verdict, failing, min_delta, alpha)


def decide_round(
    verdict: Verdict, failing: Polarity, min_delta: float, alpha: float
) -> RoundVerdict:
    """The round's decision from a margin gate's verdict: untrusted first, then cannot
    tell, then not better on the failing polarity, then not within the margin on the other."""
    target = [t.model_copy(deep=True) for t in verdict.tests if t.polarity == failing]
    guard = [t for t in verdict.tests if t.polarity != failing]
    decide(target, alpha, 0.0, floor=min_delta)
    delta, interval = _delta(target)
    found = RoundVerdict(3, "", delta, interval, target + guard)
    if verdict.status == "untrusted":
        found.code, found.reason = 2, verdict.line.removeprefix("gate: ")
        return found
    small = [t for t in target + guard if t.decision == "underpowered"]
    if not target or not guard or small:
        names = ", ".join(f"{t.name} (G = {t.scenarios}, {t.needed} needed)" for t in small)
        found.reason = f"cannot tell at this size: {names or 'a polarity was not run'}"
        return found
    found.code = 1
    worse = [t for t in target if t.decision == "not-better"]
    if worse:
        found.reason = "; ".join(
            f"{t.measure} {t.model_b}: not shown better by more than {min_delta:g} "
            f"(p = {t.p_value:.3g} > {alpha:g})" for t in worse
        )  # fmt: skip
        return found
    outside = [t for t in guard if t.decision == "not-within-margin"]
    margin = verdict.settings.margin.value
    if outside:
        found.reason = "; ".join(
            f"{t.measure} {t.model_b} ({t.polarity}s): not shown within {margin:g} (p = "
            f"{t.p_value:.3g}); against it: {', '.join(t.against_b) or 'none'}"
            for t in outside
        )  # fmt: skip
        return found
    found.code = 0
    found.reason = f"better on the {failing}s and within {margin:g} on the {other(failing)}s"
    return found


def _delta(target: list[Test]) -> tuple[float | None, tuple[float, float] | None]:
    """The failing polarity's mean difference and interval (the first model's: one model is
    the usual tune)."""
    for test in target:
        if test.mean_difference is not None:
            return test.mean_difference, paired_interval(test)
    return None, None


def degraded(suite: Suite, baseline: Side, now: Side, alpha: float = ALPHA) -> str | None:
    """Why the run set is worse under `now` than under the baseline (the gate's regression
    test over models x polarities), or None when no regression is shown."""
    verdict = gate(suite, baseline, now, settings_for(suite, alpha=alpha, margin=0.0))
    if verdict.status != "regression":
        return None
    return verdict.line.removeprefix("gate: ")

"""Bisecting CLI versions for one step change, without being fooled by flaky results.

1. The endpoints first: n0 reps at each, and a one-sided Fisher exact test must show
   p_good > p_bad at alpha' (otherwise there is nothing to bisect).
2. Each midpoint: Wald's sequential probability ratio test (Ann. Math. Statist. 16(2), 1945)
   of p = p_good against p = p_bad, the endpoint rates Jeffreys-smoothed, (k + 1/2)/(n + 1),
   so no log-likelihood ratio is infinite. It accepts "good" at log((1 - beta')/alpha') and
   "bad" at log(beta'/(1 - alpha')), with alpha' = beta' = alpha / ceil(log2 K) for K versions
   in range, so the whole bisection's chance of a wrong step stays near alpha. It stops at
   max_reps and says it cannot tell: it never guesses. Each midpoint batch also runs as many
   reps at each endpoint, and the test is taken with the endpoint rates as they stand: n0
   reps alone estimate them too roughly, and the endpoint test passes most often when they
   are overestimated apart (in simulation, 5-10 % of bisections named a wrong version at
   (0.9, 0.5) and (0.8, 0.6) without this; under 2 % with it).
3. A version that cannot run is skipped, as `git bisect skip` does.

Standard library only; the draws come from a callback, so the same code bisects real CLIs
(`run/bisect.py`) and a simulation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from evalkit.stats import fisher_greater

Decision = Literal["good", "bad", "cannot-tell", "skipped", "endpoint"]
Outcome = Literal["found", "endpoints-do-not-differ", "cannot-tell"]


def jeffreys(k: int, n: int) -> float:
    return (k + 0.5) / (n + 1)


def split_alpha(alpha: float, versions: int) -> float:
    """alpha' = alpha / ceil(log2 K): the share of alpha each of the bisection's tests gets."""
    return alpha / max(1, math.ceil(math.log2(max(2, versions))))


def bounds(alpha_prime: float) -> tuple[float, float]:
    """(lower, upper): accept "bad" at or below lower, "good" at or above upper."""
    beta_prime = alpha_prime
    return math.log(beta_prime / (1 - alpha_prime)), math.log((1 - beta_prime) / alpha_prime)


def llr(passes: int, fails: int, p_good: float, p_bad: float) -> float:
    """log L(p_good) - log L(p_bad) of `passes` and `fails`."""
    return passes * math.log(p_good / p_bad) + fails * math.log((1 - p_good) / (1 - p_bad))


@dataclass
class Step:
    """One line of the table that decided the bisection."""

    version: str
    decision: Decision
    passes: int = 0
    reps: int = 0
    llr: float | None = None
    note: str = ""


@dataclass
class Bisection:
    outcome: Outcome
    first_bad: str | None
    alpha_prime: float
    p_good: float = 0.0
    p_bad: float = 0.0
    endpoint_p: float | None = None
    steps: list[Step] = field(default_factory=list)
    last_good: str | None = None


@dataclass
class _Ends:
    """The good and bad ends, with their passes and reps so far (each test draws more)."""

    good: str
    bad: str
    kg: int
    ng: int
    kb: int
    nb: int

    def note(self) -> str:
        return f"p_good {self.kg}/{self.ng}, p_bad {self.kb}/{self.nb}"


def _sprt(
    version: str,
    draw: Callable[[str, int], list[bool]],
    ends: _Ends,
    max_reps: int,
    batch: int,
    lower: float,
    upper: float,
) -> tuple[Decision, int, int, float]:
    """One version tested until the log-likelihood ratio leaves its bounds or the reps run
    out: each batch of it is drawn beside a batch of each end, so the ends stay current."""
    passes = reps = 0
    score = 0.0
    while reps < max_reps:
        size = min(batch, max_reps - reps)
        got = draw(version, size)
        passes, reps = passes + sum(got), reps + len(got)
        more_good, more_bad = draw(ends.good, size), draw(ends.bad, size)
        ends.kg, ends.ng = ends.kg + sum(more_good), ends.ng + size
        ends.kb, ends.nb = ends.kb + sum(more_bad), ends.nb + size
        score = llr(passes, reps - passes, jeffreys(ends.kg, ends.ng), jeffreys(ends.kb, ends.nb))
        if score >= upper:
            return "good", passes, reps, score
        if score <= lower:
            return "bad", passes, reps, score
    return "cannot-tell", passes, reps, score


def bisect_versions(
    versions: list[str],
    draw: Callable[[str, int], list[bool]],
    runs: Callable[[str], bool] = lambda _: True,
    n0: int = 10,
    max_reps: int = 200,
    alpha: float = 0.05,
    batch: int = 1,
) -> Bisection:
    """Find the first bad version in `versions` (semver order, good first, bad last).
    `draw(version, n)` runs n more reps there and returns which passed; `runs(version)`
    says whether a version can run at all (its oracle rep)."""
    alpha_prime = split_alpha(alpha, len(versions))
    good, bad = versions[0], versions[-1]
    good_draws, bad_draws = draw(good, n0), draw(bad, n0)
    kg, kb = sum(good_draws), sum(bad_draws)
    p = fisher_greater(kg, n0, kb, n0)
    steps = [
        Step(good, "endpoint", kg, n0, note="good end"),
        Step(bad, "endpoint", kb, n0, note="bad end"),
    ]
    result = Bisection("cannot-tell", None, alpha_prime, jeffreys(kg, n0), jeffreys(kb, n0), p)
    result.steps = steps
    if p is None or p > alpha_prime:
        result.outcome = "endpoints-do-not-differ"
        return result
    lower, upper = bounds(alpha_prime)
    ends = _Ends(good, bad, kg, n0, kb, n0)
    candidates = list(versions)
    lo, hi = 0, len(candidates) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        version = candidates[mid]
        if not runs(version):
            steps.append(Step(version, "skipped", note="cannot run its oracle rep"))
            del candidates[mid]
            hi -= 1
            continue
        decision, passes, reps, score = _sprt(version, draw, ends, max_reps, batch, lower, upper)
        steps.append(Step(version, decision, passes, reps, score, ends.note()))
        if decision == "cannot-tell":
            return result
        if decision == "good":
            lo = mid
        else:
            hi = mid
    result.outcome = "found"
    result.first_bad = candidates[hi]
    result.last_good = candidates[lo]
    return result

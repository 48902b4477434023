"""A tune's request, its refusals before any rep, and its worst-case plan (`--dry-run`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalkit.compare.gate import ALPHA
from evalkit.errors import ConfigError, PrerequisiteError, RefusedError
from evalkit.records.rows.policy_models import is_policy
from evalkit.run.commands import Limits
from evalkit.run.prerequisites.credentials import require_credentials
from evalkit.suite.config import Suite
from evalkit.suite.lock import read_lock
from evalkit.suite.subject import subject_entries
from evalkit.tune.decide import needed_scenarios
from evalkit.tune.proposer import inside
from evalkit.tune.proposer_agent import ProposerAgent, check_proposer

DEFAULT_ROUNDS = 6
DEFAULT_MARGIN = 0.1


@dataclass
class TuneRequest:
    """`evalkit tune WORKDIR`: rounds of proposals, each decided on the run set."""

    suite: Suite
    workdir: Path
    models: list[str]
    reps: int = 2
    rounds: int = DEFAULT_ROUNDS
    budget_reps: int | None = None
    budget_usd: float | None = None
    proposer_cmd: str | None = None
    proposer: str | None = None
    paths: list[str] = field(default_factory=list)
    margin: float = DEFAULT_MARGIN
    min_delta: float = 0.0
    alpha: float = ALPHA
    controls: int = 1
    jobs: int = 2
    dry_run: bool = False
    html: Path | None = None
    """Where the trajectory page is written when the tune ends (checked before it starts)."""
    reserve_again: bool = False
    """Confirm on a reserve an earlier tune already spent (its rows say training-set)."""
    limits: Limits = field(default_factory=Limits)


@dataclass
class TunePlan:
    """What a tune would run, at most: every grid at its full size, every round taken."""

    run: dict[str, int]
    reserve: dict[str, int]
    needed: int
    paths: list[str]
    proposer: str
    """`AGENT:MODEL` of a proposer agent (one rep a round), or "command"."""
    baseline_reps: int
    round_reps: int
    reserve_reps: int
    rounds: int
    budget_reps: int | None
    budget_usd: float | None
    real: list[str]

    @property
    def worst_reps(self) -> int:
        return self.baseline_reps + self.rounds * self.round_reps + self.reserve_reps

    def lines(self) -> list[str]:
        capped = self.worst_reps
        if self.budget_reps is not None:
            capped = min(capped, self.budget_reps)
        cost = "$0 (policy models cost nothing)"
        if self.real:
            cost = (f"held to --budget-usd {self.budget_usd:g}" if self.budget_usd is not None
                    else "unknown per rep until measured (no --budget-usd)")  # fmt: skip
        return [
            f"tune: run set {self.run['positive']} positive(s), {self.run['negative']} "
            f"negative(s); reserve {self.reserve['positive']} and {self.reserve['negative']}; "
            f"the tests need {self.needed} a polarity",
            f"tune: the proposer ({self.proposer}) may change {', '.join(self.paths)}",
            f"tune: baseline {self.baseline_reps} rep(s); each of {self.rounds} round(s) at "
            f"most {self.round_reps} ({'' if self.proposer == 'command' else 'proposer, '}"
            f"inner loop and run set); reserve {self.reserve_reps}",
            f"tune: worst case {self.worst_reps} rep(s)"
            + (f", capped at {capped} by --budget-reps" if capped < self.worst_reps else "")
            + f"; cost {cost}",
        ]


def _counts(suite: Suite, which: str) -> dict[str, int]:
    found = {"positive": 0, "negative": 0}
    for sf in suite.scenarios(which):  # type: ignore[arg-type]
        found[sf.scenario.polarity] += 1
    return found


def allowed_paths(suite: Suite, given: list[str]) -> list[str]:
    """`--paths`, each inside the suite's subject (an overlay can change nothing else);
    default the subject itself."""
    entries = subject_entries(suite)
    if not given:
        return entries
    paths = [p.strip("/") for p in given]
    outside = [p for p in paths if not any(inside(p, [e]) for e in entries)]
    if outside:
        raise ConfigError(
            f"--paths {', '.join(outside)}: not inside the suite's subject "
            f"({', '.join(entries)}); a variant can change nothing else"
        )
    return paths


def check_request(request: TuneRequest) -> list[str]:
    """Every refusal that needs no rep; the models that are not scripted."""
    if not request.models:
        raise ConfigError("tune needs --models, e.g. --models sonnet or --models policy:NAME")
    proposer = proposer_of(request)
    real = [m for m in request.models if not is_policy(m)]
    if proposer is not None and not proposer.scripted:
        real.append(f"the proposer {proposer.name}")
    if real and request.budget_reps is None and request.budget_usd is None:
        raise ConfigError(
            f"tune with a real model ({', '.join(real)}) needs a hard cap: --budget-usd X "
            "or --budget-reps N"
        )
    lock = read_lock(request.suite)
    if lock is None:
        raise ConfigError(f"{request.suite.root}: not frozen; run `evalkit suite freeze` first")
    spent = lock.contaminated.get("reserve", [])
    if spent and not request.reserve_again:
        raise RefusedError(
            f"tune: the reserve is recorded contaminated already ({spent[-1].note}); it can "
            "confirm no further wording. Pass --reserve-again to run it anyway (its rows are "
            "labelled training-set), or move fresh scenarios into scenarios-reserve/"
        )
    return real


def proposer_of(request: TuneRequest) -> ProposerAgent | None:
    """The proposer agent (`--proposer`, else the suite's agent with the judge's model); None
    when a command proposes."""
    if request.proposer is not None and request.proposer_cmd:
        raise ConfigError("tune takes one proposer: --proposer AGENT:MODEL or --proposer-cmd "
                          "CMD, not both")  # fmt: skip
    if request.proposer_cmd:
        return None
    if request.proposer is None:
        return ProposerAgent(request.limits.agent, request.suite.config.judge.model)
    return ProposerAgent.parse(request.proposer)


def plan_tune(request: TuneRequest) -> TunePlan:
    """The plan, refused before any rep when a set is too small for the tests to decide."""
    real = check_request(request)
    suite, models = request.suite, len(request.models)
    needed = needed_scenarios(models, request.alpha, request.reps, request.margin)
    run, reserve = _counts(suite, "run"), _counts(suite, "reserve")
    for name, counts in (("run set", run), ("reserve", reserve)):
        small = [f"{n} {p}(s)" for p, n in counts.items() if n < needed]
        if small:
            raise RefusedError(
                f"tune: the {name} holds {' and '.join(small)}; at --reps {request.reps} and "
                f"--margin {request.margin:g} the tests need {needed} scenarios a polarity "
                f"(alpha {request.alpha:g}, Holm over {models * 2} tests) to decide; nothing "
                "was run"
            )
    size = (run["positive"] + run["negative"]) * models * request.reps
    paths = allowed_paths(suite, request.paths)
    proposer = proposer_of(request)
    if proposer is not None:
        check_proposer(proposer, suite, paths)
        if not proposer.scripted and not request.dry_run:
            try:
                require_credentials([proposer.model], agent=proposer.agent)
            except PrerequisiteError as exc:
                raise PrerequisiteError(f"--proposer {proposer.name}: {exc}") from None
    return TunePlan(
        run=run, reserve=reserve, needed=needed, paths=paths,
        proposer=proposer.name if proposer is not None else "command",
        baseline_reps=size, round_reps=2 * size + (proposer is not None),
        reserve_reps=2 * (reserve["positive"] + reserve["negative"]) * models * request.reps,
        rounds=request.rounds, budget_reps=request.budget_reps, budget_usd=request.budget_usd,
        real=real,
    )  # fmt: skip

"""`evalkit bisect`: the first CLI version at which a behaviour changed, through real reps.

The statistics live in `compare/sprt.py` and are handed in by the command; this module turns
each draw they ask for into a batch of ordinary reps in one results folder. Each batch is a
grid of its own, so its plan is appended before it runs and `verify`'s planned-against-recorded
count holds; every rep is a row like any other, with its CLI version. Reps go round-robin over
the chosen scenarios.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from evalkit.errors import ConfigError, EvalkitError
from evalkit.run.context import RunContext
from evalkit.run.grid import GridCell, run_cells
from evalkit.run.prerequisites.cli_versions import resolve
from evalkit.run.prerequisites.credentials import require_credentials
from evalkit.run.rep import RepOutcome
from evalkit.run.request import check_models, check_scenarios
from evalkit.run.scripted import PREFIX
from evalkit.suite.scenarios import ScenarioFile

R = TypeVar("R", covariant=True)


class Search(Protocol[R]):
    """The statistics that choose each draw and decide (`compare.sprt.bisect_versions`),
    handed in by the caller so the runner needs none of the comparison layer."""

    def __call__(
        self,
        versions: list[str],
        draw: Callable[[str, int], list[bool]],
        runs: Callable[[str], bool],
        n0: int,
        max_reps: int,
        alpha: float,
        batch: int,
    ) -> R: ...


@dataclass
class BisectPlan:
    versions: list[str]
    """Good first, bad last, in semver order."""
    scenarios: list[ScenarioFile]
    model: str
    n0: int = 10
    max_reps: int = 200
    alpha: float = 0.05
    batch: int = 2
    command: str = "bisect"
    _next: dict[tuple[str, str], int] = field(default_factory=dict)
    _turn: int = 0


def run_bisect(
    ctx: RunContext,
    plan: BisectPlan,
    search: Search[R],
    on_done: Callable[[RepOutcome], None] | None = None,
) -> R:
    """Bisect plan.versions for the first one where plan.model's reps stop passing."""
    if not plan.scenarios:
        raise ConfigError("bisect needs at least one scenario")
    # every refusal before the first rep: an endpoint's oracle rep writes rows
    check_models(ctx, [plan.model])
    check_scenarios(plan.scenarios, ctx.allow_reserve)
    require_credentials([plan.model], agent=ctx.agent)
    oracle = PREFIX + ctx.suite.reference.policies[0].name

    def batch(version: str, count: int, model: str) -> list[RepOutcome]:
        cells = []
        for _ in range(count):
            scenario = plan.scenarios[plan._turn % len(plan.scenarios)]
            plan._turn += 1
            key = (scenario.id, model)
            plan._next[key] = plan._next.get(key, 0) + 1
            cells.append(GridCell(scenario, model, plan._next[key], cli=version))
        command = f"{plan.command} (batch: {count} rep(s) at {version})"
        return run_cells(ctx, cells, 1, command, on_done)

    def draw(version: str, count: int) -> list[bool]:
        return [o.verdict.verdict == "PASS" for o in batch(version, count, plan.model)]

    def runs(version: str) -> bool:
        try:
            resolve([version])
        except EvalkitError:
            return False
        return all(o.verdict.verdict == "PASS" for o in batch(version, 1, oracle))

    for end in (plan.versions[0], plan.versions[-1]):
        resolve([end])  # an endpoint that cannot run is refused, never skipped
        if not runs(end):
            raise ConfigError(f"bisect: {end} cannot run its oracle rep ({oracle})")
    return search(
        plan.versions, draw, runs, plan.n0, plan.max_reps, plan.alpha, plan.batch
    )


def versions_to_bisect(good: str, bad: str, listed: str = "") -> list[str]:
    """The versions from good to bad: those `--versions` names, else every one npm serves."""
    from evalkit.run.prerequisites.cli_versions import (
        parse_versions,
        registry_versions,
        versions_between,
    )

    known = parse_versions(listed) if listed else registry_versions()
    return versions_between(good, bad, known)

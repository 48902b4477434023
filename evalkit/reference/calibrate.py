"""`evalkit calibrate`: every reference policy over every scenario, through the real CLI.

The harness is held against agents whose behaviour is known: the ideal one must
pass everything, the always- and never-acting ones must pass exactly one polarity,
and every fault mode must come out ERROR. Any other cell fails the calibration. The plan
records every cell's expected verdict, so `verify` and `report` read the folder as a
calibration (see `records/verify/calibration.py`) rather than as a measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.checkers.behaviour import Expectation
from evalkit.models import CellExpectation
from evalkit.reference.policy import FAULT_POLICIES, FLAKY, PREFIX, policy_names, scripted_agent
from evalkit.reference.selftest import meets
from evalkit.run.context import RunContext
from evalkit.run.grid import GridCell, run_cells
from evalkit.run.rep import RepOutcome
from evalkit.suite.config import Suite, Which
from evalkit.suite.subject import WITHOUT_SUBJECT

HANG_TIMEOUT = 5.0
CALIBRATION_RETRIES = 1
"""One retry is enough to show a fault is scored ERROR, and keeps calibration quick."""


@dataclass
class CalibrationCell:
    scenario: str
    policy: str
    expect: Expectation
    outcome: RepOutcome
    attempt: int = 1
    """The attempt the expected verdict must come from (2 for a flaky policy)."""

    @property
    def ok(self) -> bool:
        return meets(self.outcome.verdict, self.expect) and self.outcome.attempt == self.attempt


def _cell(outcome: RepOutcome, expect: Expectation, attempt: int) -> CalibrationCell:
    policy = outcome.model[len(PREFIX) :]
    return CalibrationCell(outcome.scenario, policy, expect, outcome, attempt)


def calibration_context(
    suite: Suite,
    work: Path,
    which: Which,
    plugins: list[Path] | None,
    variant: str | None,
    unconfined: bool,
    agent: str,
    cli: str | None,
) -> RunContext:
    """The context a calibration runs in: a fresh run id, the scripted policies, two minutes
    a rep, the reserve allowed when it is asked for."""
    from evalkit.records.folder.run_ids import new_run_id
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.prerequisites.cli_versions import chosen_cli
    from evalkit.suite.subject import build_subject

    ctx = RunContext(
        suite=suite,
        workdir=work,
        results=work / "results.tsv",
        run_id=new_run_id(),
        timeout=120,
        subject=build_subject(suite, plugins, variant),
        unconfined=unconfined,
        agent=agent,
        scripted=POLICIES,
    )
    ctx.use_cli(chosen_cli(cli))
    ctx.allow_reserve = which in ("reserve", "all")
    return ctx


def chosen_policies(suite: Suite, named: list[str], unconfined: bool) -> list[str]:
    """The policies named, or every one of the suite's (the escape probe only when confined).
    The recon probe runs only when named: a runs-tests row it flags does not yet re-derive
    alike under `verify`."""
    from evalkit.reference.escape import ESCAPE
    from evalkit.reference.recon import RECON

    chosen = [p for p in policy_names(suite) if p != RECON]
    return named or [p for p in chosen if not (unconfined and p == ESCAPE)]


def calibrate(
    ctx: RunContext,
    which: Which,
    jobs: int,
    policies: list[str] | None = None,
    on_done: Callable[[RepOutcome], None] | None = None,
) -> list[CalibrationCell]:
    suite = ctx.suite
    ctx.max_retries = min(ctx.max_retries, CALIBRATION_RETRIES)
    chosen = policies or policy_names(suite)
    without_subject = ctx.the_subject().variant == WITHOUT_SUBJECT
    scenarios = suite.scenarios(which)
    expect: dict[tuple[str, str], tuple[Expectation, int]] = {}
    cells = []
    for scenario in scenarios:
        for policy in chosen:
            model = PREFIX + policy
            agent = scripted_agent(suite, model, scenario, without_subject=without_subject)
            expect[(scenario.id, model)] = (agent.plan.expect, agent.expected_attempt)
            timeout = HANG_TIMEOUT if FAULT_POLICIES.get(policy) == "hang" else None
            retries = agent.expected_attempt - 1 if policy in FLAKY else None
            cells.append(GridCell(scenario, model, 1, timeout, retries=retries))
    ctx.plan_extra = {
        "calibration": True,
        "expected_verdicts": [
            CellExpectation(
                scenario=scenario, model=model, verdict=e.verdict, reason=e.reason, attempt=attempt
            )
            for (scenario, model), (e, attempt) in expect.items()
        ],
    }
    outcomes = run_cells(ctx, cells, jobs, f"calibrate --set {which}", on_done)
    result = [_cell(o, *expect[(o.scenario, o.model)]) for o in outcomes]
    order = {(s.id, p): i for i, (s, p) in enumerate((s, p) for s in scenarios for p in chosen)}
    return sorted(result, key=lambda c: order[(c.scenario, c.policy)])

"""Proving the instrument before a real model is paid for.

A run or grid on a real model spends money and hours; if the checker no longer scores the
reference behaviours as designed, or the ideal agent cannot pass through the CLI in use (a
plugin that does not load, a hook that does not fire), every row it writes measures the
harness, not the agent. So before any run or grid (and calibrate, which runs a grid) whose
models include one that is not a `policy:*`, the suite's self-test and one `policy:oracle` rep
through the real CLI run first, in seconds, and either one red refuses the paid work before
anything is planned. `--skip-preflight` runs it anyway, and its plan says so.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import RefusedError
from evalkit.reference.policy import PREFIX, is_policy, policy_names, scripted_agent
from evalkit.reference.selftest import meets, self_test
from evalkit.suite.scenarios import ScenarioFile

if TYPE_CHECKING:
    from evalkit.run.runner import RunContext

ORACLE = PREFIX + "oracle"
ORACLE_TIMEOUT = 120.0
"""The longest the oracle rep may take; a scripted rep takes a few seconds."""
REFUSED = "nothing was planned; fix the instrument, or pass --skip-preflight to run anyway"


def needs_proof(models: list[str]) -> bool:
    """A real model is paid for; policies are the proof themselves."""
    return any(not is_policy(m) for m in models)


def prove_instrument(ctx: RunContext, scenario: ScenarioFile, models: list[str]) -> None:
    """Refuse the run when the instrument is not proven for a real model among `models`; on
    return, ctx.preflight says what the plan records: `passed`, `skipped`, or empty when
    every model is a policy."""
    ctx.preflight = ""
    if not needs_proof(models):
        return
    if ctx.skip_preflight:
        ctx.preflight = "skipped"
        return
    cells = self_test(ctx.suite, agent=ctx.agent)
    wrong = sum(1 for c in cells if not c.ok and not c.blind)
    if wrong:
        raise RefusedError(
            f"preflight: the self-test has {wrong}/{len(cells)} cell(s) other than designed "
            f"(`evalkit self-test` names them); {REFUSED}"
        )
    problem = oracle_problem(ctx, scenario)
    if problem is not None:
        raise RefusedError(f"preflight: {problem}; {REFUSED}")
    ctx.preflight = "passed"
    if ctx.notify is not None:
        ctx.notify(
            f"preflight passed: self-test {len(cells)}/{len(cells)} cells as designed, "
            f"{ORACLE} on {scenario.id} as designed through the CLI"
        )


def oracle_problem(ctx: RunContext, scenario: ScenarioFile) -> str | None:
    """One `policy:oracle` rep of `scenario` through the CLI the run will use, with the run's
    subject, recorded in a scratch folder that is removed after; None when it came out as
    designed, else what it came out as."""
    from evalkit.run.runner import RunContext, new_run_id, run_reps

    if ORACLE.removeprefix(PREFIX) not in policy_names(ctx.suite):
        return f"checker {ctx.suite.checker.name} declares no {ORACLE} to prove the CLI with"
    expect = scripted_agent(ctx.suite, ORACLE, scenario).plan.expect
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-preflight-"))
    try:
        proof = RunContext(
            suite=ctx.suite,
            workdir=scratch,
            results=scratch / "results.tsv",
            run_id=new_run_id(),
            timeout=min(ctx.timeout, ORACLE_TIMEOUT),
            stop=ctx.stop,
            max_retries=ctx.max_retries,
            allow_reserve=ctx.allow_reserve,
            subject=ctx.the_subject(),
            template_sandboxes=False,
            agent=ctx.agent,
        )
        outcomes = run_reps(proof, scenario, ORACLE, 1)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if ctx.stop.is_set() or not outcomes:
        raise RefusedError(f"preflight: interrupted during the {ORACLE} rep; {REFUSED}")
    done = outcomes[0]
    if meets(done.verdict, expect):
        return None
    cli = f"claude {done.row.cli_version}" if done.row.cli_version else "the CLI"
    return (
        f"{ORACLE} on {scenario.id} through {cli} came out {done.verdict.verdict} "
        f"({done.row.reasons}), where {expect.verdict} was designed"
    )

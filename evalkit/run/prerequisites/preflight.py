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
from collections.abc import Callable
from pathlib import Path

from evalkit.errors import RefusedError
from evalkit.run.context import RunContext, new_run_id
from evalkit.run.rep import RepOutcome
from evalkit.run.scripted import PREFIX, is_policy, require_scripted
from evalkit.suite.scenarios import ScenarioFile

RunReps = Callable[[RunContext, ScenarioFile, str, int], list[RepOutcome]]
"""Reps of one scenario on one model, planned and recorded (`session.run_scenario`)."""

ORACLE = PREFIX + "oracle"
ESCAPE = PREFIX + "escape"
ESCAPE_FILES = "evalkit-escape*"
"""What `policy:escape` tries to leave outside its rep (`reference/escape.py`), by name."""
ORACLE_TIMEOUT = 120.0
"""The longest the oracle rep may take; a scripted rep takes a few seconds."""
REFUSED = "nothing was planned; fix the instrument, or pass --skip-preflight to run anyway"


def needs_proof(models: list[str]) -> bool:
    """A real model is paid for; policies are the proof themselves."""
    return any(not is_policy(m) for m in models)


def prove_instrument(
    ctx: RunContext, scenario: ScenarioFile, models: list[str], run_reps: RunReps
) -> None:
    """Refuse the run when the instrument is not proven for a real model among `models`; on
    return, ctx.preflight says what the plan records: `passed`, `skipped`, or empty when
    every model is a policy. `run_reps` runs the oracle rep."""
    ctx.preflight = ""
    prove_confinement(ctx, scenario, run_reps)
    if not needs_proof(models):
        return
    if ctx.skip_preflight:
        ctx.preflight = "skipped"
        return
    wrong, total = require_scripted(ctx.scripted).self_test(ctx.suite, ctx.agent)
    if wrong:
        raise RefusedError(
            f"preflight: the self-test has {wrong}/{total} cell(s) other than designed "
            f"(`evalkit self-test` names them); {REFUSED}"
        )
    problem = oracle_problem(ctx, scenario, run_reps)
    if problem is not None:
        raise RefusedError(f"preflight: {problem}; {REFUSED}")
    ctx.preflight = "passed"
    if ctx.notify is not None:
        ctx.notify(
            f"preflight passed: self-test {total}/{total} cells as designed, "
            f"{ORACLE} on {scenario.id} as designed through the CLI"
        )


def prove_confinement(ctx: RunContext, scenario: ScenarioFile, run_reps: RunReps) -> None:
    """Where the backend's confinement can be proven only on the machine that runs it (srt on
    macOS: nothing on Linux enforces a Seatbelt profile), one `policy:escape` rep through the
    CLI first: `ctx.escape_proof` is `held` when it came out as designed and nothing of it
    landed in HOME or its results folder, else `failed`, and every rep declares which, so
    `verify` flags the folder's rows as it flags unconfined ones unless it held. Its canary
    files that did land are removed."""
    from evalkit.run.backends import backend

    if ctx.unconfined or ctx.skip_preflight or not backend(ctx.backend).proves_here:
        return
    landed: list[Path] = []

    def look(results: Path) -> None:
        landed.extend([*Path.home().glob(ESCAPE_FILES), *results.rglob(ESCAPE_FILES)])

    problem = policy_problem(ctx, scenario, run_reps, ESCAPE, look)
    for path in landed:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    ctx.escape_proof = "held" if problem is None and not landed else "failed"
    if ctx.notify is not None:
        said = problem or (f"{len(landed)} canary file(s) landed outside the rep" if landed else "")
        ctx.notify(f"{ESCAPE} on this machine: {ctx.escape_proof}" + (f" ({said})" if said else ""))


def oracle_problem(ctx: RunContext, scenario: ScenarioFile, run_reps: RunReps) -> str | None:
    """One `policy:oracle` rep of `scenario` through the CLI the run will use, with the run's
    subject, recorded in a scratch folder that is removed after; None when it came out as
    designed, else what it came out as."""
    return policy_problem(ctx, scenario, run_reps, ORACLE)


def policy_problem(
    ctx: RunContext,
    scenario: ScenarioFile,
    run_reps: RunReps,
    policy: str,
    look: Callable[[Path], None] | None = None,
) -> str | None:
    """One rep of `policy`, as `oracle_problem` says; `look` is shown its results folder
    before that is removed."""
    scripted = require_scripted(ctx.scripted)
    if policy.removeprefix(PREFIX) not in scripted.names(ctx.suite):
        return f"checker {ctx.suite.checker.name} declares no {policy} to prove the CLI with"
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
            scripted=scripted,
            backend=ctx.backend,
            unconfined=ctx.unconfined,
            skip_preflight=True,  # the proof itself is not proven again
        )
        outcomes = run_reps(proof, scenario, policy, 1)
        if look is not None:
            look(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if ctx.stop.is_set() or not outcomes:
        raise RefusedError(f"preflight: interrupted during the {policy} rep; {REFUSED}")
    done = outcomes[0]
    designed = scripted.as_designed(ctx.suite, policy, scenario, done.verdict)
    if designed is None:
        return None
    cli = f"claude {done.row.cli_version}" if done.row.cli_version else "the CLI"
    return (
        f"{policy} on {scenario.id} through {cli} came out {done.verdict.verdict} "
        f"({done.row.reasons}), where {designed} was designed"
    )

"""`evalkit bisect`: the first Claude Code version at which a behaviour changed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel, state
from evalkit.cli.options import Confine


@command("bisect", short_help="Find the first CLI version where a pass rate changed.")
def bisect_command(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
    good: Annotated[str, typer.Option("--good", help="a version that behaves")] = "",
    bad: Annotated[str, typer.Option("--bad", help="a later version that does not")] = "",
    model: Annotated[str, typer.Option("--model", help="the model, or policy:<name>")] = "",
    scenarios: Annotated[str, typer.Option("--scenarios", help="comma-separated ids")] = "",
    which: Annotated[str, typer.Option("--set", help="run or reserve")] = "run",
    versions: Annotated[
        str, typer.Option("--versions", help="the versions to choose from (default: npm's)")
    ] = "",
    n0: Annotated[int, typer.Option("--n0", min=1, help="reps at each endpoint")] = 10,
    max_reps: Annotated[
        int, typer.Option("--max-reps", min=1, help="reps at a midpoint before cannot tell")
    ] = 200,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha", min=0.0001, max=0.5, help="chance of any wrong step, shared by the tests"
        ),
    ] = 0.05,
    batch: Annotated[int, typer.Option("--batch", min=1, help="reps per batch")] = 2,
    confine: Confine = "",
) -> None:
    """Bisect CLI versions for one step change in MODEL's pass rate, with Wald's SPRT per
    midpoint; prints the table that decided each step.

    Example: `evalkit bisect --good 2.1.326 --bad 2.1.328 --model sonnet --scenarios P1,P2`
    """
    from evalkit.cli.app import out
    from evalkit.compare.sprt import bisect_versions
    from evalkit.errors import ConfigError
    from evalkit.records.folder.run_ids import default_workdir, new_run_id
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.bisect import BisectPlan, run_bisect, versions_to_bisect
    from evalkit.run.context import RunContext
    from evalkit.suite.lock import ensure_frozen

    if not (good and bad and model):
        raise ConfigError("bisect needs --good, --bad and --model")
    if which not in ("run", "reserve"):
        raise typer.BadParameter("--set takes run or reserve")
    suite = state.suite()
    ensure_frozen(suite)
    pool = suite.scenarios(which)  # type: ignore[arg-type]
    if scenarios:
        pool = [suite.resolve(ref, which) for ref in scenarios.split(",") if ref]  # type: ignore[arg-type]
    chosen = versions_to_bisect(good, bad, versions)
    work = (workdir or default_workdir(suite)).resolve()
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id=new_run_id(),
                     allow_reserve=which == "reserve", scripted=POLICIES,
                     backend=confine)  # fmt: skip
    plan = BisectPlan(chosen, pool, model, n0, max_reps, alpha, batch,
                      f"bisect --good {good} --bad {bad} --model {model}")  # fmt: skip
    result = run_bisect(ctx, plan, bisect_versions)
    out.print(f"run {ctx.run_id}: {len(chosen)} version(s) from {good} to {bad}; "
              f"alpha' {result.alpha_prime:.4g}", markup=False)  # fmt: skip
    out.print("version  step  PASS k/n  LLR  note", markup=False)
    for step in result.steps:
        score = "-" if step.llr is None else f"{step.llr:+.2f}"
        out.print(f"{step.version}  {step.decision}  {step.passes}/{step.reps}  {score}  "
                  f"{step.note}", markup=False)  # fmt: skip
    if result.outcome == "endpoints-do-not-differ":
        out.print(f"endpoints do not differ at {n0} reps (one-sided Fisher p "
                  f"{result.endpoint_p:.3g})", markup=False)  # fmt: skip
    elif result.outcome == "cannot-tell":
        last = result.steps[-1]
        out.print(f"cannot tell at {last.reps} reps ({last.version})", markup=False)
    else:
        out.print(f"first bad version: {result.first_bad} (last good: {result.last_good})",
                  markup=False)  # fmt: skip
    out.print(f"rows in {rel(ctx.results)}", markup=False)

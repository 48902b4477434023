"""`evalkit calibrate`: the harness against reference agents of known behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel, state
from evalkit.cli.options import UNCONFINED_BANNER, AgentOption, Confine, Unconfined
from evalkit.cli.subject_options import CliOption, PluginOption, VariantOption


@command("calibrate", short_help="Run reference agents of known behaviour through the suite.")
def calibrate_command(
    workdir: Annotated[Path | None, typer.Argument(help="default: a new temporary folder")] = None,
    which: Annotated[str, typer.Option("--set", help="run, reserve or all")] = "run",
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="reps at once")] = 4,
    policies: Annotated[str, typer.Option("--policies", help="comma-separated subset")] = "",
    plugin: PluginOption = None,
    variant: VariantOption = None,
    unconfined: Unconfined = False,
    confine: Confine = "",
    cli: CliOption = None,
    agent: AgentOption = "claude",
) -> None:
    """Run every reference policy and fault mode over every scenario through the real CLI.

    Exits non-zero, printing the matrix, when any cell differs from the expected one.

    Example: `evalkit calibrate --set all`
    """
    from evalkit.cli.app import err, out
    from evalkit.cli.calibration_table import print_matrix
    from evalkit.cli.interrupts import stop_on_signals
    from evalkit.cli.progress import rep_progress
    from evalkit.reference.calibrate import calibrate, calibration_context, chosen_policies

    if which not in ("run", "reserve", "all"):
        raise typer.BadParameter("--set takes run, reserve or all")
    suite = state.suite()
    if workdir is None:
        import tempfile

        workdir = Path(tempfile.mkdtemp(prefix="evalkit-calibrate-"))
    work = workdir.resolve()
    ctx = calibration_context(suite, work, which, plugin, variant, unconfined, agent, cli)  # type: ignore[arg-type]
    ctx.backend = confine
    chosen = chosen_policies(suite, [p for p in policies.split(",") if p], unconfined)
    total = len(suite.scenarios(which)) * len(chosen)  # type: ignore[arg-type]
    if unconfined:
        err.print(UNCONFINED_BANNER, style="bold red", markup=False)
    with stop_on_signals(ctx.stop), rep_progress(total) as bar:
        cells = calibrate(ctx, which, jobs, chosen, on_done=bar.done)  # type: ignore[arg-type]
    if ctx.stop.is_set():
        err.print("interrupted: the calibration is incomplete")
        raise typer.Exit(130)
    print_matrix(out, cells, chosen)
    wrong = [c for c in cells if not c.ok]
    for cell in wrong:
        err.print(
            f"{cell.scenario} {cell.policy}: expected {cell.expect.verdict}"
            f"{' (' + cell.expect.reason + ')' if cell.expect.reason else ''} at attempt "
            f"{cell.attempt}, got {cell.outcome.verdict.verdict} at attempt "
            f"{cell.outcome.attempt} {';'.join(cell.outcome.verdict.reasons)}"
        )
    out.print(
        f"{len(cells) - len(wrong)}/{len(cells)} cells as expected; "
        f"rows and evidence in {rel(work)}"
    )
    if wrong:
        raise typer.Exit(1)

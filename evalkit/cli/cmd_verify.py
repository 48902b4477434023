"""`evalkit verify`: re-derive every recorded row from its kept evidence."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import command, state

if TYPE_CHECKING:
    from evalkit.records.verify.result import VerifyReport


@command("verify", short_help="Re-derive every recorded row from its kept evidence.")
def verify(
    workdir: Annotated[Path | None, typer.Argument(help="default: results/ in the suite")] = None,
    junit: Annotated[
        Path | None, typer.Option("--junit", help="also write JUnit XML for the CI to FILE")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="also exit non-zero when NOT PUBLISHABLE")
    ] = False,
) -> None:
    """Rebuild each trial's sandbox from fixture + diffs, re-score it, compare, then count.

    Exits non-zero unless every trial re-derives and the counts match the plans. A folder that
    `calibrate` wrote is held to the verdicts its plans expected instead of being published:
    it exits non-zero, naming them, when any cell came out otherwise. A trial scored
    by older scoring code is named `older` (its records are held to each other, not re-derived;
    `evalkit results rescore` scores it again), and the folder is not publishable until it is. With
    `--strict` a folder that re-derives but is NOT PUBLISHABLE exits 1 too (for a CI step). The
    verdict is recorded in WORKDIR/verified.json for `evalkit report` to read while the records
    it was drawn from stay unchanged.

    Example: `evalkit verify results/`
    """
    from evalkit.cli.app import out
    from evalkit.records.folder.run_ids import default_workdir
    from evalkit.records.verify.record import verify_and_record

    suite = state.suite()
    work = (workdir or default_workdir(suite)).resolve()
    if junit is not None:
        from evalkit.records.pages.target import check_target

        check_target(suite, [work], junit, "junit")
    report = verify_and_record(suite, work)
    if junit is not None:
        from evalkit.ci.cases import verify_suites
        from evalkit.ci.junit import write

        write(junit, verify_suites(suite.name, str(work), report))
    _print_trials(report)
    older = sum(1 for t in report.trials if t.ok and t.older_code and not t.rescored)
    if report.all_rederived and not older:
        out.print(f"All {len(report.trials)} trial(s) re-derived from the kept evidence.")
    bad = sum(1 for t in report.trials if not t.ok)
    calibration = report.calibration
    if calibration is not None:
        out.print(calibration.headline, markup=False)
        for line in calibration.differ:
            out.print(f"  {line}", markup=False)
    elif report.publishable:
        out.print("PUBLISHABLE")
    else:
        out.print("NOT PUBLISHABLE: " + "; ".join(report.publish_problems), markup=False)
    if report.all_rederived and older:
        out.print(f"{older} trial(s) scored by older scoring code; not re-derived under this code")
        raise typer.Exit(1)
    if not report.all_rederived:
        out.print(
            f"{bad} trial(s) did not re-derive; {len(report.count_problems)} count problem(s); "
            f"{len(report.unreadable)} line(s) skipped"
        )
        raise typer.Exit(1)
    if calibration is not None and not calibration.ok:
        raise typer.Exit(1)
    if strict and calibration is None and not report.publishable:
        raise typer.Exit(1)


def _print_trials(report: VerifyReport) -> None:
    """One line per trial (ok, older or MISMATCH), per skipped line and per count problem."""
    from evalkit.cli.app import out

    for trial in report.trials:
        if trial.ok and trial.older_code:
            since = " (re-scored since)" if trial.rescored else ""
            out.print(
                f"  older     {trial.name}  {trial.verdict}  scored-by-older-code{since}",
                markup=False,
            )
        elif trial.ok:
            out.print(f"  ok        {trial.name}  {trial.verdict}", markup=False)
        else:
            out.print(f"  MISMATCH  {trial.name}  {'; '.join(trial.problems)}", markup=False)
    for line in report.unreadable:
        out.print(f"  SKIPPED   {line}", markup=False)
    for problem in report.count_problems:
        out.print(f"  MISMATCH  {problem}", markup=False)

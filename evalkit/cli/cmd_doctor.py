"""`evalkit doctor`: each prerequisite OK or FAIL, with the fix."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.cli.options import AgentOption, Confine
from evalkit.cli.subject_options import CliOption
from evalkit.errors import EvalkitError


@command("doctor", short_help="Check each prerequisite and say how to fix it.")
def doctor_command(
    ping: Annotated[
        bool, typer.Option("--ping", help="send one minimal real request through the CLI")
    ] = False,
    model: Annotated[str, typer.Option("--model", help="the model --ping asks")] = "haiku",
    no_self_test: Annotated[
        bool, typer.Option("--no-self-test", help="skip the self-test, the slowest check")
    ] = False,
    cli: CliOption = None,
    agent: AgentOption = "claude",
    confine: Confine = "",
) -> None:
    """Check the CLI, confinement, credentials (never printed), plugins, lock and self-test;
    with --ping, one real request. Exits 1 when any check fails.

    Example: `evalkit doctor --ping`
    """
    from evalkit.cli.app import out
    from evalkit.reference.scripted import POLICIES
    from evalkit.run.prerequisites.doctor import Check, doctor

    suite_problem: Check | None = None
    try:
        suite = state.suite()
    except EvalkitError as exc:
        suite, suite_problem = None, Check("suite", False, str(exc), "pass --suite DIR")
    checks = doctor(suite, model if ping else None, None if no_self_test else POLICIES, cli, agent,
                    confine)  # fmt: skip
    if suite_problem is not None:
        checks.insert(0, suite_problem)
    for check in checks:
        mark = "OK  " if check.ok else "FAIL"
        line = f"{mark} {check.name}: {check.detail}"
        out.print(line + (f" -- fix: {check.fix}" if not check.ok and check.fix else ""),
                  markup=False)  # fmt: skip
    if not all(c.ok for c in checks):
        raise typer.Exit(1)

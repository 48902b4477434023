"""`evalkit doctor`: each prerequisite OK or FAIL, with the fix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.cli.options import AgentOption, Confine
from evalkit.cli.subject_options import CliOption
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.run.prerequisites.world_look import WorldLook


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
    world: Annotated[
        bool,
        typer.Option(
            "--world",
            help="instead, show what the agent will see of its world (one confined scripted "
            "rep, asked a neutral prompt of its own), each word naming the measurement "
            "highlighted; exits 1 when there is one",
        ),
    ] = False,
) -> None:
    """Check the CLI, confinement, credentials (never printed), plugins, lock and self-test;
    with --ping, one real request. Exits 1 when any check fails.

    Example: `evalkit doctor --ping`, `evalkit doctor --world`
    """
    from evalkit.cli.app import out
    from evalkit.reference.scripted import POLICIES

    if world:
        from evalkit.run.prerequisites.world_look import look_at_world

        if not print_world(look_at_world(state.suite(), POLICIES, agent, cli, confine)):
            raise typer.Exit(1)
        return
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


def print_world(look: WorldLook) -> bool:
    """The look, each line holding a marker led by `!` and its word shown `>>so<<`; True when
    there was none and the look-around finished."""
    from rich.text import Text

    from evalkit.cli.app import out

    sections = [
        ("where the rep's folders appear", [f"{role:<24} {path}" for role, path in look.places]),
        ("who it is (as `id` and `hostname` printed it)", look.who),
        ("the environment its tools inherit (as `env` printed it)", look.environment),
        ("the environment's context in the CLI's first request", look.context),
    ]
    for title, lines in sections:
        out.print(f"{title}:", markup=False)
        for line in lines or ["(nothing)"]:
            pieces = look.highlighted(line)
            text = Text("! " if any(marked for _, marked in pieces) else "  ")
            for piece, marked in pieces:
                text.append(f">>{piece}<<" if marked else piece, "bold red" if marked else "")
            out.print(text)
    if look.partial:
        out.print(f"declared partial here: {', '.join(look.partial)}", markup=False)
    if look.error:
        out.print(f"FAIL the look-around did not finish: {look.error}", markup=False)
    said = ", ".join(look.markers)
    verdict = (
        f"FAIL words naming the measurement reached the model: {said}"
        if said
        else ("OK   no word naming the measurement reached the model")
    )
    out.print(verdict, markup=False)
    return not look.markers and not look.error

"""`evalkit init`: a new suite from a template, and what to do next."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel


@command("init", short_help="Write a new working suite from a template.")
def init_command(
    dest: Annotated[Path, typer.Argument(help="a new or empty folder for the suite")],
    template: Annotated[
        str, typer.Option("--template", help="blank, vault-write or adr")
    ] = "blank",
) -> None:
    """Write a complete, working suite (fixture, stand-in plugin, scenarios, rules, rubric).

    `evalkit self-test` and `evalkit calibrate --set all` pass in it straight away.

    Example: `evalkit init my-eval --template adr`
    """
    from evalkit.cli.app import out
    from evalkit.suite.scaffold import init_suite, next_steps

    made = init_suite(dest, template)
    out.print(
        f"wrote the {made.template} template into {rel(made.root)} ({len(made.files)} files)",
        markup=False,
    )
    for line in next_steps(rel(made.root), made.template):
        out.print(line, markup=False)

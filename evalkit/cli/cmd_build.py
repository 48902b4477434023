"""`evalkit suite build`: rebuild the suite's built fixture files when missing or stale."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.app import moved_command, state, suite_app


@moved_command(suite_app, "build", short_help="Rebuild the suite's built fixture files when stale.")
def build_command(
    force: Annotated[bool, typer.Option("--force", help="rebuild even when fresh")] = False,
) -> None:
    """Build the fixture files the suite declares under `build:` (e.g. a code graph).

    Every command that needs the fixtures does this itself; `make setup` runs it once.
    Example: `evalkit --suite suites/adr-eval-b suite build`
    """
    from evalkit.cli.app import out

    suite = state.suite()
    steps = suite.config.build
    if not steps:
        out.print(f"{suite.name}: nothing to build")
        return
    rebuilt = suite.ensure_built(force=force)
    for step in steps:
        word = "built" if step.name in rebuilt else "up to date"
        out.print(f"{suite.name}: {step.name} ({step.output}/) {word}")

"""`evalkit suite freeze` and `evalkit suite contaminate`: the suite's frozen state and its
training sets."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.app import moved_command, rel, state, suite_app


@moved_command(suite_app, "freeze", short_help="Record the suite's hashes in evalkit.lock.")
def freeze_command() -> None:
    """Write evalkit.lock: hashes of fixtures, plugins, both scenario sets, rubric, checker.

    Example: `evalkit suite freeze`
    """
    from evalkit.cli.app import out
    from evalkit.suite.lock import freeze, lock_path

    suite = state.suite()
    lock = freeze(suite)
    out.print(f"froze {len(lock.hashes)} entries into {rel(lock_path(suite))}")


@moved_command(
    suite_app, "contaminate", short_help="Record that wording was tuned against a scenario set."
)
def contaminate_command(
    which: Annotated[str, typer.Option("--set", help="run or reserve")],
    note: Annotated[str, typer.Option("--note", help="what was tuned against this set")],
    variant: Annotated[
        str | None,
        typer.Option("--variant", help="only this variant's wording was tuned (default: all)"),
    ] = None,
) -> None:
    """Record that wording was tuned against a set; its results become training-set results,
    for every variant or, with --variant, for that variant's rows only.

    Example: `evalkit suite contaminate --set run --note "tuned the write skill's description"`, or
    `evalkit suite contaminate --set run --variant terse-skill --note "terse-skill tuned on run"`
    """
    from evalkit.cli.app import out
    from evalkit.suite.lock import contaminate, lock_path

    if which not in ("run", "reserve"):
        raise typer.BadParameter("--set takes run or reserve")
    suite = state.suite()
    contaminate(suite, which, note, variant)  # type: ignore[arg-type]
    whose = f" for variant {variant}" if variant else ""
    out.print(f"the {which} set is now labelled training-set{whose} in {rel(lock_path(suite))}")

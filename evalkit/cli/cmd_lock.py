"""`evalkit freeze` and `evalkit contaminate`: the suite's frozen state and its training sets."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.app import command, out, rel, state
from evalkit.suite.lock import contaminate, freeze, lock_path


@command("freeze")
def freeze_command() -> None:
    """Write evalkit.lock: hashes of fixtures, plugins, both scenario sets, rubric, checker.

    Example: `evalkit freeze`
    """
    suite = state.suite()
    lock = freeze(suite)
    out.print(f"froze {len(lock.hashes)} entries into {rel(lock_path(suite))}")


@command("contaminate")
def contaminate_command(
    which: Annotated[str, typer.Option("--set", help="run or reserve")],
    note: Annotated[str, typer.Option("--note", help="what was tuned against this set")],
) -> None:
    """Record that wording was tuned against a set; its results become training-set results.

    Example: `evalkit contaminate --set run --note "tuned the write skill's description"`
    """
    if which not in ("run", "reserve"):
        raise typer.BadParameter("--set takes run or reserve")
    suite = state.suite()
    contaminate(suite, which, note)  # type: ignore[arg-type]
    out.print(f"the {which} set is now labelled training-set in {rel(lock_path(suite))}")

"""`evalkit sandbox`: a fresh, git-inited copy of the fixtures for one scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel, state


@command("sandbox", short_help="Make a fresh copy of one scenario's fixtures to try.")
def sandbox(
    scenario: Annotated[str, typer.Argument(help="scenario id or short id, e.g. P1")],
    dest: Annotated[Path, typer.Argument(help="new or empty folder")],
) -> None:
    """Build a sandbox: DEST/project (git-inited), the other fixtures, DEST/sandbox.json.

    Example: `evalkit sandbox P1 /tmp/sbx-p1`
    """
    from evalkit.cli.app import out
    from evalkit.run.sandbox import build_sandbox

    suite = state.suite()
    manifest = build_sandbox(suite, suite.resolve(scenario), dest)
    out.print(f"sandbox for {manifest.scenario} at {rel(dest)}")

"""`evalkit cli list|prune`: the cache of Claude Code versions that `--cli` installs into."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.app import command


@command("cli", short_help="List or prune the cached Claude Code versions.")
def cli_command(
    action: Annotated[str, typer.Argument(metavar="ACTION", help="list or prune")],
    keep: Annotated[
        str, typer.Option("--keep", help="prune: versions to keep besides the pinned one")
    ] = "",
) -> None:
    """List the cached CLI versions (semver order), or prune all but the pinned one.

    Example: `evalkit cli list` or `evalkit cli prune --keep 2.1.327`
    """
    from evalkit.cli.app import out
    from evalkit.run.prerequisites.claude_cli import PINNED_VERSION
    from evalkit.run.prerequisites.cli_versions import cache_root, installed, parse_versions, prune

    if action == "list":
        found = installed()
        for cli in found:
            pinned = "  (pinned, the default)" if cli.version == PINNED_VERSION else ""
            out.print(f"{cli.version}  {cli.integrity or '-'}{pinned}", markup=False)
        out.print(f"{len(found)} version(s) in {cache_root()}", markup=False)
    elif action == "prune":
        gone = prune(keep=parse_versions(keep) if keep else [])
        out.print(f"removed {len(gone)} version(s): {', '.join(gone) or 'none'}", markup=False)
    else:
        raise typer.BadParameter("ACTION is list or prune")

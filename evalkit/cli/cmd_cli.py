"""`evalkit cli list|prune|pinned`: the cache of Claude Code versions that `--cli` installs
into, and the agent CLI versions evalkit is measured with (what a CI recipe installs)."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.app import command


@command("cli", short_help="List or prune the cached CLI versions; print a pinned one.")
def cli_command(
    action: Annotated[str, typer.Argument(metavar="ACTION", help="list, prune or pinned")],
    keep: Annotated[
        str, typer.Option("--keep", help="prune: versions to keep besides the pinned one")
    ] = "",
    agent: Annotated[
        str, typer.Option("--agent", help="pinned: the agent whose pinned version to print")
    ] = "claude",
) -> None:
    """List the cached CLI versions (semver order), prune all but the pinned one, or print
    the version of an agent's CLI evalkit is measured with (from its one pin file).

    Example: `evalkit cli list`, `evalkit cli prune --keep 2.1.327`,
    `npm install -g "@anthropic-ai/claude-code@$(evalkit cli pinned)"`
    """
    from evalkit.cli.app import out
    from evalkit.run.prerequisites.claude_cli import PINNED_VERSION
    from evalkit.run.prerequisites.cli_versions import cache_root, installed, parse_versions, prune

    if action == "pinned":
        from evalkit.pins import pinned_agents

        pins = pinned_agents()
        if agent not in pins:
            raise typer.BadParameter(f"--agent is one of {', '.join(sorted(pins))}")
        print(pins[agent])
        return
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
        raise typer.BadParameter("ACTION is list, prune or pinned")

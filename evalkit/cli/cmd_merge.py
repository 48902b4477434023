"""`evalkit merge`: shards of one grid into one folder that verifies as one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, rel


@command("merge", short_help="Merge the shards of one grid into one results folder.")
def merge_command(
    target: Annotated[Path, typer.Argument(help="the merged folder (new, or earlier merges)")],
    shards: Annotated[list[Path], typer.Argument(help="the shards' WORKDIRs")],
) -> None:
    """Copy the shards' rows, manifest lines, plans and evidence into OUT, all or nothing;
    refuse shards of another grid, instrument or N, any rep held twice (under any run id) and
    evidence missing or outside its folder; name what is missing.

    Example: `evalkit merge results/ shard-1/ shard-2/ shard-3/`
    """
    from evalkit.cli.app import err, out
    from evalkit.records.merge import merge

    done = merge(target, shards)
    out.print(
        f"merged shard(s) {', '.join(done.shards)} of {done.digest} into {rel(target)}: "
        f"{done.rows} row(s), {done.lines} manifest line(s)"
    )
    if done.missing_shards:
        err.print(f"missing shard(s): {', '.join(done.missing_shards)}")
    for line in done.missing_reps[:20]:
        err.print(f"missing rep: {line}")
    if len(done.missing_reps) > 20:
        err.print(f"... and {len(done.missing_reps) - 20} more missing rep(s)")
    out.print(f"`evalkit verify {rel(target)}` re-derives every row from the merged evidence")

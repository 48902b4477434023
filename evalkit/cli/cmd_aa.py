"""`evalkit aa`: what an A/A folder says the gate is worth."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.cli.options import Format


@command("aa")
def aa_command(
    workdir: Annotated[Path, typer.Argument(help="a results folder of `evalkit grid --aa`")],
    draws: Annotated[
        int, typer.Option("--draws", min=100, help="seeded re-splits of the arms (default 1000)")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="the re-splits' seed")] = 0,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, max=1.0, help="the gate's family-wise level")
    ] = 0.05,
    fmt: Annotated[Format, typer.Option("--format", help="table, markdown or json")] = (
        Format.table
    ),
) -> None:
    """Read an A/A folder (the suite's wording against a byte-identical copy, `grid --aa`):
    the verdict-flip rate per scenario and cell, and the gate's false-positive rate over
    seeded re-splits of the arms, with the 95th percentile of chance differences that
    `gate --aa-from` refuses to act below.

    Example: `evalkit grid results/aa --aa --models sonnet --reps 5 --max-cost-usd 20`, then
    `evalkit aa results/aa`
    """
    from evalkit.compare.aa import aa_report

    built = aa_report(state.suite(), workdir, draws, seed, alpha)
    if fmt is Format.json:
        print(built.model_dump_json(indent=2))
        return
    bullet = "- " if fmt is Format.markdown else "  "
    lines = [f"evalkit aa: {built.suite}: {built.workdir}", "verdict flips (A's k-th rep vs B's):"]
    for flip in [*built.cells, *built.scenarios]:
        rate = "-" if flip.rate is None else f"{flip.rate:.2f}"
        lines.append(f"{bullet}{flip.where}: {flip.flips}/{flip.pairs} = {rate}")
    lines.append(built.line)
    print("\n".join(lines))

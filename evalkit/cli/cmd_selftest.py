"""`evalkit self-test`: prove the checker in both directions, without any model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, state


@command("self-test")
def self_test_command(
    workdir: Annotated[
        Path | None, typer.Argument(help="keep the sandboxes of cells that fail here")
    ] = None,
) -> None:
    """Fabricate compliant and violating runs for every scenario of both sets and score them.

    Exits non-zero when any cell comes out other than designed.

    Example: `evalkit self-test`
    """
    from evalkit.cli.app import err, out
    from evalkit.reference.selftest import self_test

    cells = self_test(state.suite(), workdir)
    width = max(len(c.case) for c in cells)
    for cell in cells:
        expected = cell.expect.verdict + (f" ({cell.expect.reason})" if cell.expect.reason else "")
        mark = "ok   " if cell.ok else "WRONG"
        line = f"{mark} {cell.scenario:<16} {cell.case:<{width}} {cell.verdict.verdict:<5}"
        if not cell.ok:
            reasons = ";".join(cell.verdict.reasons + cell.verdict.flags)
            line += f"  expected {expected}; reasons {reasons}"
        out.print(line, markup=False)
    wrong = [c for c in cells if not c.ok]
    out.print(f"{len(cells) - len(wrong)}/{len(cells)} cells as designed")
    if wrong and workdir is not None:
        err.print(f"their sandboxes are kept under {workdir}", markup=False)
    if wrong:
        err.print(f"self-test: {len(wrong)} cell(s) came out other than designed")
        raise typer.Exit(1)

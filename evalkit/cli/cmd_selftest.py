"""`evalkit self-test`: prove the checker in both directions, without any model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.cli.options import AgentOption


@command("self-test", short_help="Prove the checker passes and fails as meant, no model.")
def self_test_command(
    workdir: Annotated[
        Path | None, typer.Argument(help="keep the sandboxes of cells that fail here")
    ] = None,
    agent: AgentOption = "claude",
) -> None:
    """Fabricate compliant and violating runs for every scenario of both sets and score them.

    With --agent codex or gemini, each run is told in that agent's own stream format and
    read back through its normaliser. Then the world scan is held to fabricated request
    bodies of every wire, a marker of the suite planted in one channel of each (and bodies
    that must give none). Exits non-zero when any cell or body comes out other than designed.

    Example: `evalkit self-test --agent codex`
    """
    from evalkit.cli.app import err, out
    from evalkit.reference.selftest import self_test_and_scan
    from evalkit.run.agents.clis import agent_name

    cells, planted = self_test_and_scan(state.suite(), workdir, agent=agent_name(agent))
    width = max(len(c.case) for c in cells)
    for cell in cells:
        expected = cell.expect.verdict + (f" ({cell.expect.reason})" if cell.expect.reason else "")
        mark = "ok   " if cell.ok else "BLIND" if cell.blind else "WRONG"
        line = f"{mark} {cell.scenario:<16} {cell.case:<{width}} {cell.verdict.verdict:<5}"
        if not cell.ok:
            reasons = ";".join(cell.verdict.reasons + cell.verdict.flags)
            line += f"  expected {expected}; reasons {reasons}"
        if cell.blind:
            line += f"; {agent}'s stream cannot show {', '.join(cell.lost)}"
        out.print(line, markup=False)
    wrong = [c for c in cells if not c.ok and not c.blind]
    blind = [c for c in cells if c.blind]
    for body in (b for b in planted if not b.ok):
        out.print(f"WRONG world-scan {body.wire:<9} {body.case:<13} expected "
                  f"{';'.join(body.expected) or 'no marker'}; found "
                  f"{';'.join(body.found) or 'no marker'}", markup=False)  # fmt: skip
    wires = ", ".join(dict.fromkeys(b.wire for b in planted))
    out.print(f"world scan: {sum(b.ok for b in planted)}/{len(planted)} planted request "
              f"bodies as designed ({wires})")  # fmt: skip
    out.print(f"{sum(c.ok for c in cells)}/{len(cells)} cells as designed")
    if blind:
        unseen = sorted({what for c in blind for what in c.lost})
        out.print(
            f"{len(blind)} cell(s) differ only where {agent}'s stream cannot show "
            f"{'; '.join(unseen)}",
            markup=False,
        )
    if wrong and workdir is not None:
        err.print(f"their sandboxes are kept under {workdir}", markup=False)
    if wrong:
        err.print(f"self-test: {len(wrong)} cell(s) came out other than designed")
    if not all(b.ok for b in planted):
        err.print(f"self-test: {sum(not b.ok for b in planted)} planted request body(ies) "
                  "came out other than designed")  # fmt: skip
    if wrong or not all(b.ok for b in planted):
        raise typer.Exit(1)

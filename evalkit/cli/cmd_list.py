"""`evalkit list`: what scenarios a suite holds. Never the Task text."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from evalkit.cli.app import command, out, state
from evalkit.suite.config import Which


@command("list")
def list_scenarios(
    which: Annotated[str, typer.Option("--set", help="run, reserve or all")] = "run",
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """List scenarios: id, polarity, level, set, topic.

    Example: `evalkit list --set all`
    """
    if which not in ("run", "reserve", "all"):
        raise typer.BadParameter("--set takes run, reserve or all")
    chosen: Which = which  # type: ignore[assignment]
    scenarios = state.suite().scenarios(chosen)
    rows = [
        {
            "id": s.id,
            "polarity": s.scenario.polarity,
            "level": s.scenario.level,
            "kind": s.scenario.kind,
            "set": s.scenario.set,
            "topic": s.scenario.topic,
        }
        for s in scenarios
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(box=None, pad_edge=False)
    for column in ("id", "polarity", "level", "set", "topic"):
        table.add_column(column)
    for row in rows:
        group = {**row, "level": row["level"] or row["kind"] or "-"}
        table.add_row(*(str(group[c]) for c in ("id", "polarity", "level", "set", "topic")))
    out.print(table)

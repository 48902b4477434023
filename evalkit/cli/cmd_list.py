"""`evalkit list`: what scenarios a suite holds. Never the Task text.

It reads the suite's catalog, not the whole suite, and prints plain aligned columns, so it
loads neither the checker nor rich: one row per scenario, ids never cut, at any width.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from evalkit.cli.app import command, state

COLUMNS = ("id", "polarity", "level", "set", "topic")


@command("list", short_help="List the suite's scenarios (never their Task text).")
def list_scenarios(
    which: Annotated[str, typer.Option("--set", help="run, reserve or all")] = "run",
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """List scenarios: id, polarity, level, set, topic.

    Example: `evalkit list --set all`
    """
    if which not in ("run", "reserve", "all"):
        raise typer.BadParameter("--set takes run, reserve or all")
    scenarios = state.catalog().scenarios(which)  # type: ignore[arg-type]
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
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = [list(COLUMNS)] + [
        [str({**row, "level": row["level"] or row["kind"] or "-"}[c]) for c in COLUMNS]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in table)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in lines))

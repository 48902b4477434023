"""A run's plan, appended to `plans.jsonl` before the first of its reps starts: what `verify`,
`report` and `grid --resume` count the recorded reps against."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evalkit.models import Plan, PlanCell
from evalkit.records.folder.workdir import Workdir


def write_plan(
    records: Workdir,
    run_id: str,
    command: str,
    cells: list[PlanCell],
    *,
    results: str,
    suite: str,
    **fields: Any,
) -> Plan:
    """Append the plan (stamped now) and return it; `fields` are the plan's other columns."""
    plan = Plan(
        run_id=run_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=command,
        cells=cells,
        results=results,
        suite=suite,
        **fields,
    )
    records.append_plan(plan)
    return plan

"""A results folder's rows with the scenario files they name, resolved once each."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.models import ResultRow

if TYPE_CHECKING:
    from evalkit.suite.config import Suite
    from evalkit.suite.scenarios import ScenarioFile


def with_scenarios(
    suite: Suite,
    rows: Iterable[ResultRow],
    unknown: set[str],
    known: dict[str, ScenarioFile | None] | None = None,
) -> Iterator[tuple[ResultRow, ScenarioFile]]:
    """Each row with its scenario file; a row whose scenario the suite no longer has is left
    out and its id added to `unknown`. `known` carries what was resolved across calls."""
    known = {} if known is None else known
    for row in rows:
        if row.scenario not in known:
            try:
                known[row.scenario] = suite.resolve(row.scenario)
            except EvalkitError:
                known[row.scenario] = None
        sf = known[row.scenario]
        if sf is None:
            unknown.add(row.scenario)
            continue
        yield row, sf

"""The rep list of a large `report --html` page, one script file per cell beside the page.

A page of many reps opens from per-cell summaries alone and loads a cell's reps when a
person opens it, so neither the page nor the build ever holds every rep's entry. A cell here
is the finest grouping the page's tables and filters use: one scenario under one model, one
subject, one CLI version, one judge and one agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

INLINE_REPS = 5000
"""A folder with more reps than this keeps its rep list in cell files, not in the page."""
CELL_FIELDS = (
    "scenario", "model", "variant", "subject_hash", "cli_version", "judged_by", "agent", "backend",
)  # fmt: skip
LOADER = "evalkitReps"


def is_breach(token: str) -> bool:
    return "breach" in token.split(":")[0]


class RepCells:
    """Takes each rep's entry in cell order and hands out each cell's file once it is whole,
    keeping only the summary the page's overview and filters need."""

    def __init__(self) -> None:
        self.summaries: list[dict[str, Any]] = []
        self._entries: list[str] = []
        self._summary: dict[str, Any] | None = None
        self._whole: list[tuple[str, bytes]] = []

    def add(self, entry: dict[str, Any], text: str) -> None:
        """One rep's entry (masked, relative) and its script-safe JSON text."""
        key = {name: entry.get(name) for name in CELL_FIELDS}
        summary = self._summary
        if summary is None or any(summary[name] != key[name] for name in CELL_FIELDS):
            self._close()
            summary = self._summary = {
                **key,
                "file": len(self.summaries),
                "count": 0,
                "breaches": 0,
                "verdicts": [],
                "flags": [],
                "bundles": [],
            }
        summary["count"] += 1
        summary["breaches"] += sum(1 for t in entry.get("reasons", []) if is_breach(t))
        _note(summary["verdicts"], [entry.get("verdict")])
        _note(summary["flags"], entry.get("flags", []))
        _note(summary["bundles"], [entry.get("bundle_id")])
        self._entries.append(text)

    def files(self, others: Iterable[tuple[str, bytes]]) -> Iterator[tuple[str, bytes]]:
        """`others` (the evidence files), with each cell's file given as soon as it is whole."""
        for item in others:
            yield item
            yield from self._drain()
        self._close()
        yield from self._drain()

    def _close(self) -> None:
        if self._summary is None:
            return
        index = self._summary["file"]
        body = f"{LOADER}({index},[{','.join(self._entries)}]);\n"
        self._whole.append((f"reps-{index}.js", body.encode("utf-8")))
        self.summaries.append(self._summary)
        self._summary, self._entries = None, []

    def _drain(self) -> Iterator[tuple[str, bytes]]:
        while self._whole:
            yield self._whole.pop(0)


def _note(seen: list[Any], values: Iterable[Any]) -> None:
    for value in values:
        if value not in (None, "") and value not in seen:
            seen.append(value)


def cell_order(entry_key: dict[str, Any]) -> tuple[str, ...]:
    """How rows are sorted so each cell's reps come together."""
    return tuple(str(entry_key.get(name, "")) for name in CELL_FIELDS)

"""The brief a proposer is handed: what the incumbent wording's failing cells did.

Per failing cell (scenario, model): the scenario's id, polarity and level, the model, its
pass rate with its Wilson interval, and what the agent did as evalkit recorded it: the
reason and flag tokens of its rows, the tools it called and the files its calls wrote.
Never a Task line, the checker's code or options, a scenario file or its calibration: the
brief is built from rows, scenario front matter fields and kept transcripts only, and the
proposer sees nothing else of the suite. The reason tokens do tell the proposer what the
checker looks for; the run set is recorded contaminated before the first brief, so that is
allowed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from evalkit import stats
from evalkit.exports.rows import evidence_lines
from evalkit.models import EvidenceLine, ResultRow
from evalkit.records.folder.confined import evidence_files
from evalkit.records.folder.workdir import Workdir
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite

WRITING_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
MAX_FILES = 8
MAX_PATH = 120


@dataclass
class Cell:
    scenario: str
    polarity: str
    level: str
    model: str
    rows: list[ResultRow]

    @property
    def passes(self) -> int:
        return sum(1 for r in self.rows if r.verdict == "PASS")


def failing_cells(suite: Suite, rows: list[ResultRow]) -> list[Cell]:
    """Every (scenario, model) with a FAIL row, in the suite's order (an ERROR measured no
    wording)."""
    known = {s.id: s for s in suite.scenarios("run")}
    cells: dict[tuple[str, str], Cell] = {}
    for row in rows:
        sf = known.get(row.scenario)
        if sf is None:
            continue
        key = (row.scenario, row.model)
        if key not in cells:
            level = sf.scenario.level or sf.scenario.kind or "-"
            cells[key] = Cell(row.scenario, sf.scenario.polarity, level, row.model, [])
        cells[key].rows.append(row)
    order = {sid: i for i, sid in enumerate(known)}
    found = [c for c in cells.values() if any(r.verdict == "FAIL" for r in c.rows)]
    return sorted(found, key=lambda c: (order[c.scenario], c.model))


def _done(folder: Path, lines: dict[tuple[str, str, str, int], EvidenceLine], row: ResultRow
          ) -> tuple[list[str], list[str]]:  # fmt: skip
    """The tools a row's agent called and the files its writing calls named."""
    line = lines.get((row.run_id, row.scenario, row.model, row.rep))
    if line is None:
        return [], []
    try:
        path = evidence_files(folder, line).get("transcript")
        transcript = read_transcript(path) if path is not None else None
    except Exception:  # a kept file that is missing or tampered with says nothing here
        return [], []
    if transcript is None:
        return [], []
    tools = [c.name for c in transcript.tool_calls]
    files = [
        str(c.input.get("file_path") or c.input.get("notebook_path") or "")[:MAX_PATH]
        for c in transcript.tool_calls
        if c.name in WRITING_TOOLS and not c.is_error
    ]
    return tools, [f for f in files if f]


def _cell_text(cell: Cell, folder: Path, lines: dict[tuple[str, str, str, int], EvidenceLine]
               ) -> list[str]:  # fmt: skip
    n, k = len(cell.rows), cell.passes
    low, high = stats.wilson(k, n) or (0.0, 1.0)
    tokens: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    files: list[str] = []
    for row in cell.rows:
        if row.verdict == "PASS":
            continue
        tokens.update(t for t in row.reasons.split(";") if t and t != "-")
        called, wrote = _done(folder, lines, row)
        tools.update(called)
        files += [f for f in wrote if f not in files]
    return [
        f"## {cell.scenario} ({cell.polarity}, {cell.level}) on {cell.model}",
        f"- passed {k} of {n} ({k / n:.0%}, 95% interval {low:.0%} to {high:.0%})",
        f"- reasons and flags: {', '.join(sorted(tokens)) or 'none recorded'}",
        f"- tools called: {', '.join(f'{t} x{c}' for t, c in sorted(tools.items())) or 'none'}",
        f"- files written: {', '.join(files[:MAX_FILES]) or 'none'}",
        "",
    ]


def write_brief(suite: Suite, folder: Path, rows: list[ResultRow], paths: list[str]) -> str:
    """The brief's text for the incumbent's rows in `folder`."""
    records = Workdir(folder)
    lines = {(x.run_id, x.scenario, x.model, x.rep): x for x in evidence_lines(records)}
    cells = failing_cells(suite, rows)
    text = [
        "# What the current wording did",
        "",
        "Change the wording in this folder so that the agent does what the failing cases "
        "below need, without breaking the others. Only these paths may change: "
        + ", ".join(paths) + ".",
        "",
        f"{len(cells)} failing case(s) of {len({r.scenario for r in rows})} scenario(s).",
        "",
    ]  # fmt: skip
    for cell in cells:
        text += _cell_text(cell, folder, lines)
    return "\n".join(text)


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

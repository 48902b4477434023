"""The results TSV under many writers: no row torn, none dropped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evalkit.models import ResultRow
from evalkit.records.results import COLUMNS, append_row, read_rows

WRITER = """
import sys
from pathlib import Path
from evalkit.models import ResultRow
from evalkit.records.results import append_row
n = int(sys.argv[2])
for k in range(50):
    append_row(Path(sys.argv[1]), ResultRow(scenario=f"P{n}", model="m", a="A:PASS", b="B:PASS",
               verdict="PASS", reasons="x" * 3000, rep=k))
"""


def test_32_processes_appending_at_once_lose_and_tear_nothing(tmp_path: Path) -> None:
    target = tmp_path / "results.tsv"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(n)]) for n in range(32)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = target.read_text().splitlines()
    assert lines[0].split("\t") == COLUMNS
    assert len(lines) == 1 + 32 * 50
    assert all(len(line.split("\t")) == len(COLUMNS) for line in lines)
    rows = read_rows(target)
    assert sorted((r.scenario, r.rep) for r in rows) == sorted(
        (f"P{n}", k) for n in range(32) for k in range(50)
    )


def test_the_first_six_columns_are_the_ones_the_loops_read(tmp_path: Path) -> None:
    target = tmp_path / "r.tsv"
    append_row(
        target,
        ResultRow(
            scenario="N1",
            model="haiku",
            a="A:PASS",
            b="B:n/a",
            verdict="PASS",
            reasons="project-write:yes\twith tab",
        ),
    )
    header, row = target.read_text().splitlines()
    assert header.split("\t")[:6] == ["scenario", "model", "a", "b", "verdict", "reasons"]
    assert row.split("\t")[:6] == [
        "N1",
        "haiku",
        "A:PASS",
        "B:n/a",
        "PASS",
        "project-write:yes with tab",
    ]

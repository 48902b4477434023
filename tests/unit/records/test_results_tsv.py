"""The results TSV under many writers: no row torn, none dropped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.models import ResultRow
from evalkit.records.folder.results import COLUMNS, append_row, read_rows

pytestmark = pytest.mark.heavy


def _writer(target: Path, n: int, go: int) -> None:
    """A forked child: waits for the start signal, appends its 50 rows, exits at once."""
    code = 1
    try:
        os.read(go, 1)
        for k in range(50):
            append_row(target, ResultRow(scenario=f"P{n}", model="m", a="A:PASS", b="B:PASS",
                       verdict="PASS", reasons="x" * 3000, rep=k))  # fmt: skip
        code = 0
    finally:
        os._exit(code)


def test_32_processes_appending_at_once_lose_and_tear_nothing(tmp_path: Path) -> None:
    """32 forked processes (evalkit already imported, so they start at once), released
    together, append 50 rows each."""
    target = tmp_path / "results.tsv"
    go_read, go_write = os.pipe()
    children = []
    for n in range(32):
        pid = os.fork()
        if pid == 0:
            _writer(target, n, go_read)
        children.append(pid)
    os.write(go_write, b"g" * 32)
    os.close(go_write)
    os.close(go_read)
    assert all(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in children)
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

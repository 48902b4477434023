"""The trajectory page: a line per round and the reserve's verdict last, every value escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.suite.config import Suite
from evalkit.tune.page import write_page
from tests.tuning_suite import write_tuning_suite

LINES = [
    {"kind": "start", "tune": "tune-x", "models": ["policy:phrase:keep"], "reps": 2},
    {"kind": "round", "round": 1, "variant": "tune-1", "parent": "suite", "tune": "tune-x",
     "decision": "rejected", "reason": "specificity <b>: not shown within 0.3", "delta": 0.0,
     "interval": [0.0, 0.0], "reps": 42},
    {"kind": "round", "round": 2, "variant": "tune-2", "parent": "suite", "tune": "tune-x",
     "decision": "accepted", "reason": "better", "delta": 1.0, "interval": [1.0, 1.0],
     "reps": 42, "proposer_reps": 1},
    {"kind": "reserve", "variant": "tune-2", "tune": "tune-x", "code": 0, "reason": "better",
     "delta": 1.0, "interval": [0.8, 1.0], "reps": 48},
]  # fmt: skip


def test_the_page_shows_each_round_then_the_reserve_escaped(tmp_path: Path) -> None:
    suite = Suite(write_tuning_suite(tmp_path / "suite"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "tune.jsonl").write_text("".join(json.dumps(x) + "\n" for x in LINES))
    page = write_page(suite, work, tmp_path / "tune.html").read_text()
    rows = page.split("<tbody>")[1].split("</tbody>")[0].strip().splitlines()
    assert [r.split("<td>")[1].split("</td>")[0] for r in rows] == ["1", "2", "reserve"]
    assert "<td>42</td>" in rows[0] and "<td>43</td>" in rows[1]  # the proposer's rep too
    assert "confirmed" in rows[2] and "+1.000 [+0.800, +1.000]" in rows[2]
    assert "&lt;b&gt;" in page and "<b>" not in page


def test_the_page_is_never_written_over_what_evalkit_reads(tmp_path: Path) -> None:
    suite = Suite(write_tuning_suite(tmp_path / "suite"))
    with pytest.raises(RefusedError):
        write_page(suite, tmp_path / "work", suite.root / "evalkit.yaml")

"""`compare` and `gate` read at 80 columns: every number of their JSON is printed whole, no
table line runs past the edge, and the gate says its verdict before any table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.suite.config import Suite
from tests.unit.compare.test_compare import ALL_PASS, WRITES_ALWAYS, fabricate

pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    suite = Suite(Path(__file__).resolve().parents[3])
    root = tmp_path_factory.mktemp("sides")
    for model in ("policy:oracle", "sonnet"):
        fabricate(suite, root / "A", model, ALL_PASS, reps=3)
        fabricate(suite, root / "B", model, WRITES_ALWAYS, reps=3)
    return root / "A", root / "B"


MAIN = "import sys; from evalkit.cli.main import main; sys.argv[0] = 'evalkit'; main()"


def _evalkit(*args: str, columns: int = 80) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "--suite", str(repo), *args],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    return done.stdout


def _tokens(text: str) -> set[str]:
    return set(re.split(r"[\s,\[\]()]+", text))


def _table_lines(text: str, starts: tuple[str, ...]) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(starts)]


def test_compare_at_80_columns_prints_every_number_of_its_json_whole(
    sides: tuple[Path, Path],
) -> None:
    a, b = sides
    text = _evalkit("compare", str(a), str(b), "--allow-confounded")
    data = json.loads(_evalkit("compare", str(a), str(b), "--allow-confounded", "--format", "json"))
    wanted = set()
    for entry in data["comparisons"]:
        wanted |= {f"{entry['a']['k']}/{entry['a']['n']}", f"{entry['b']['k']}/{entry['b']['n']}"}
        wanted.add(f"{entry['difference']:+.3f}")
        wanted |= {f"{x:+.3f}" for x in entry["interval"] or []}
        wanted.add(f"{entry['p_value']:.4g}")
    missing = sorted(wanted - _tokens(text))
    rows = _table_lines(text, ("rep ", "scenario "))
    assert missing == [], missing
    assert rows and all(len(line.rstrip()) <= 80 for line in rows)
    assert "…" not in text


def test_compare_wide_keeps_the_long_notes_in_their_column(sides: tuple[Path, Path]) -> None:
    a, b = sides
    text = _evalkit("compare", str(a), str(b), "--allow-confounded", "--wide")
    header = any("what this n can show" in line and "B-A" in line for line in text.splitlines())
    assert header


def test_gate_at_80_columns_leads_with_its_verdict_and_prints_every_number_whole(
    sides: tuple[Path, Path],
) -> None:
    a, b = sides
    text = _evalkit("gate", str(a), str(b))
    data = json.loads(_evalkit("gate", str(a), str(b), "--format", "json"))
    first = text.splitlines()[0]
    wanted = {f"{t['mean_difference']:+.3f}" for t in data["tests"]}
    wanted |= {f"{t['p_value']:.4g}" for t in data["tests"]}
    wanted |= {f"{t['level']:.4g}" for t in data["tests"]}
    missing = sorted(wanted - _tokens(text))
    leads = first.startswith("CANNOT BE TRUSTED (exit 2)")
    assert leads, first[:40]
    assert missing == [], missing
    assert "…" not in text
    names_whole = all(f"{t['measure']} {t['model_b']} " in text for t in data["tests"])
    assert names_whole

"""`compare --html`: one forest-plot row per cell, every string escaped, OUT guarded."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.compare import compare
from evalkit.compare.forest import forest_page
from evalkit.compare.sides import load_side
from evalkit.suite.config import Suite
from tests.unit.compare.test_compare import ALL_PASS, WRITES_ALWAYS, fabricate

pytestmark = pytest.mark.heavy

HOSTILE = 'policy:<script>alert("x")</script>'


def _cli(suite: Suite, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--suite", str(suite.root), *args])
    return result.exit_code, result.output


def test_each_cell_is_one_row_with_its_interval(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    built = compare(suite, load_side("A", a), load_side("B", b))
    page = forest_page(suite, built)
    per_rep = [e for e in built.comparisons if e.analysis == "per-rep"]
    assert page.count('<tr class="cell') == len(per_rep)
    assert page.count('<line class="ci"') == len(per_rep)
    assert "cannot tell: 3 scenarios cannot reach 0.05" in page


def test_a_hostile_model_name_is_text_not_markup(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", HOSTILE, WRITES_ALWAYS)
    built = compare(suite, load_side("A", a), load_side("B", b))
    page = forest_page(suite, built)
    assert "<script" not in page
    assert html.escape(HOSTILE) in page


def test_the_page_names_no_absolute_folder(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    out = tmp_path / "forest.html"
    code, output = _cli(suite, "compare", str(a), str(b), "--html", str(out))
    assert code == 0, output
    page = out.read_text(encoding="utf-8")
    assert (str(tmp_path) in page) is False
    assert re.search(r"A: a\b", page) is not None


def test_a_page_over_a_results_file_is_refused(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    before = (b / "results.tsv").read_bytes()
    code, output = _cli(suite, "compare", str(a), str(b), "--html", str(b / "results.tsv"))
    assert code == 2, output
    assert (b / "results.tsv").read_bytes() == before


def test_a_foreign_file_is_not_overwritten(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    mine = tmp_path / "notes.html"
    mine.write_text("mine", encoding="utf-8")
    code, output = _cli(suite, "compare", str(a), str(b), "--html", str(mine))
    assert code == 2, output
    assert mine.read_text(encoding="utf-8") == "mine"

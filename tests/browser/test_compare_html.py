"""`compare --html` as a person sees it: the forest plot opened from disk in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.compare import compare
from evalkit.compare.sides import load_side
from evalkit.suite.config import Suite
from tests.browser.chromium import chromium, open_page
from tests.unit.compare.test_compare import ALL_PASS, WRITES_ALWAYS, fabricate

pytestmark = pytest.mark.browser


def test_the_forest_plot_has_one_row_per_cell_with_its_interval(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", 'policy:<img src=x onerror="alert(1)">', WRITES_ALWAYS)
    out = tmp_path / "compare.html"
    result = CliRunner().invoke(
        app, ["--suite", str(suite.root), "compare", str(a), str(b), "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    built = compare(suite, load_side("A", a), load_side("B", b))
    cells = {(e.set, e.level, e.polarity) for e in built.comparisons if e.analysis == "per-rep"}
    with chromium() as driver:
        open_page(driver, out)
        rows = driver.find_elements("css selector", "tr.cell")
        shown = {
            (
                r.get_attribute("data-set"),
                r.get_attribute("data-level"),
                r.get_attribute("data-polarity"),
            )
            for r in rows
        }
        assert len(rows) == len(cells) and shown == cells
        for row in rows:
            assert row.find_element("css selector", "td.interval").text.startswith("[")
            assert len(row.find_elements("css selector", "svg line.ci")) == 1
        assert driver.find_elements("css selector", "img") == []

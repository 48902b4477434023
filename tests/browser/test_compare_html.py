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


def test_the_compare_page_opens_on_a_headline_and_colours_what_got_worse(
    suite: Suite, tmp_path: Path
) -> None:
    from tests.conftest import REPO

    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", WRITES_ALWAYS)
    out = tmp_path / "compare.html"
    args = ["--suite", str(suite.root), "compare", str(a), str(b), "--html", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    built = compare(suite, load_side("A", a), load_side("B", b))
    worse = {
        (e.set, e.level, e.polarity)
        for e in built.comparisons
        if e.analysis == "per-rep" and e.interval is not None and e.interval[1] < 0
    }
    with chromium() as driver:
        open_page(driver, out)
        text = driver.find_element("id", "headline").text
        top = driver.find_element("id", "headline").rect["y"]
        table = driver.find_element("css selector", "table.forest").rect["y"]
        red = {
            (r.get_attribute("data-set"), r.get_attribute("data-level"),
             r.get_attribute("data-polarity"))
            for r in driver.find_elements("css selector", "tr.cell.worse")
        }  # fmt: skip
        axis = [t.text for t in driver.find_elements("css selector", "th svg.axis text")]
        (REPO / ".artifacts").mkdir(exist_ok=True)
        driver.save_screenshot(str(REPO / ".artifacts" / "compare-page.png"))
    said = "Specificity fell from" in text and "no test can reach 0.05" in text
    assert said and top < table
    assert worse and red == worse
    assert axis == ["-1", "-0.5", "+0", "+0.5", "+1"]

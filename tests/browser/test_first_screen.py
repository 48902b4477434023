"""The report page's first screen answers "what failed" before "why": in a 1,400 x 1,000
window it holds the headline and the scenario x model grid, failures first, with no
horizontal scroll, and a grid cell opens that cell's reps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.suite.config import Suite
from tests.browser.chromium import chromium, open_page
from tests.conftest import REPO
from tests.fabricated_results import make_folder

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / ".artifacts"
SCENARIOS = ("P1", "N1", "P2", "N2", "P3", "N3")
MODELS = ("sonnet", "haiku", "opus")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = Suite(REPO)
    work = tmp_path_factory.mktemp("first") / "results"
    make_folder(suite, work, models=MODELS, scenarios=SCENARIOS, reps=3)
    out = work.parent / "report.html"
    result = CliRunner().invoke(
        app, ["--suite", str(REPO), "report", str(work), "--html", str(out)]
    )
    assert result.exit_code == 0, result.output[-300:]
    return out


@pytest.fixture(scope="module")
def opened(page: Path) -> Iterator[Any]:
    with chromium() as driver:
        open_page(driver, page)
        yield driver


def test_the_first_screen_holds_the_headline_and_the_grid_with_no_horizontal_scroll(
    opened: Any,
) -> None:
    size = opened.execute_script(
        "var g = document.getElementById('first-grid').getBoundingClientRect();"
        "var h = document.getElementById('headline').getBoundingClientRect();"
        "return [innerWidth, innerHeight, document.documentElement.scrollWidth, g.bottom, h.top];"
    )
    width, height, scroll_width, grid_bottom, headline_top = size
    ARTIFACTS.mkdir(exist_ok=True)
    opened.save_screenshot(str(ARTIFACTS / "html-report-first-screen.png"))
    assert scroll_width <= width, (scroll_width, width)
    assert 0 <= headline_top < grid_bottom <= height, (headline_top, grid_bottom, height)


def test_the_headline_counts_the_reps_that_passed_and_names_the_failed_scenarios(
    opened: Any,
) -> None:
    text = opened.find_element("id", "headline").text
    cells = opened.find_elements("css selector", "#first-grid td.cell")
    failed = {
        c.get_attribute("data-scenario")
        for c in cells
        if "cell-pass" not in c.get_attribute("class")
    }
    reps = len(SCENARIOS) * len(MODELS) * 3
    counted = f" of {reps} reps passed" in text
    named = all(s in text for s in failed)
    assert counted and named, sorted(failed)


def test_failures_come_first_and_a_cell_opens_its_reps(opened: Any) -> None:
    rows = opened.find_elements("css selector", "#first-grid tbody tr")
    kinds = []
    for row in rows:
        classes = " ".join(
            c.get_attribute("class") for c in row.find_elements("css selector", "td.cell")
        )
        kinds.append(2 if "cell-fail" in classes else 1 if "cell-error" in classes else 0)
    assert kinds == sorted(kinds, reverse=True), kinds
    cell = opened.find_elements("css selector", "#first-grid td.cell")[0]
    scenario, model = cell.get_attribute("data-scenario"), cell.get_attribute("data-model")
    cell.click()
    shown = opened.find_elements("css selector", "#rep-rows tr")
    texts = [r.text for r in shown]
    only = bool(texts) and all(scenario in t and model in t for t in texts)
    assert only, (scenario, model, len(texts))

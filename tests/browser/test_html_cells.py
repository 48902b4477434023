"""A page past its inline threshold, opened from disk in headless Chromium: it opens to its
overview from per-cell summaries, loads a cell's reps from the folder beside it when the cell
is opened, filters them, and shows hostile text in the loaded part as text with the Task masked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit.records.pages.html import write_html
from evalkit.records.pages.target import evidence_folder
from evalkit.suite.config import Suite
from evalkit.suite.task import MASK, read_task
from tests.browser.chromium import chromium, open_page
from tests.conftest import REPO
from tests.fabricated_results import XSS_JUDGE, make_folder

pytestmark = pytest.mark.browser

XSS_REASON = "note:</script><script>window.__evalkitXss='reason'</script>\"'<!--"


def _task_line(suite: Suite) -> str:
    """A long line of P1's Task, planted in a reason. Never printed."""
    lines = [x.strip() for x in read_task(suite.resolve("P1")).splitlines()]
    return max((x for x in lines if ";" not in x and "\t" not in x), key=len)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of 16 reps whose first row's reasons carry hostile text and a Task line, drawn
    with a threshold of 3 reps so its list goes to cell files."""
    suite = Suite(REPO)
    work = tmp_path_factory.mktemp("cells") / "results"
    make_folder(suite, work, quoted=_task_line(suite))
    results = work / "results.tsv"
    lines = results.read_text().splitlines()
    column = lines[0].split("\t").index("reasons")
    cells = lines[1].split("\t")
    cells[column] = f"{XSS_REASON};{_task_line(suite)};{cells[column]}"
    lines[1] = "\t".join(cells)
    results.write_text("\n".join(lines) + "\n")
    out = work.parent / "big.html"
    write_html(suite, work, out, "auto", inline_reps=3)
    return out


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium() as d:
        yield d


@pytest.fixture()
def opened(driver: Any, page: Path) -> Any:
    open_page(driver, page)
    return driver


def _reps(d: Any) -> list[Any]:
    return d.find_elements("css selector", "#rep-rows tr.rep")


def _wait_for_reps(d: Any) -> list[Any]:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(d, 30).until(lambda x: _reps(x))
    return _reps(d)


def _open_hostile_cell(d: Any) -> None:
    row = d.find_element("css selector", '#overview .level tbody tr[data-model="sonnet"]')
    row.click()
    _wait_for_reps(d)


def test_the_page_opens_to_its_overview_with_no_rep_loaded(opened: Any, page: Path) -> None:
    assert opened.find_elements("css selector", "#overview .level tbody tr")
    assert _reps(opened) == []
    assert opened.find_element("id", "rep-note").is_displayed()
    loaded = opened.execute_script("return document.querySelectorAll('script[src]').length")
    assert loaded == 0
    assert sorted(evidence_folder(page).glob("reps-*.js"))


def test_opening_a_cell_loads_its_reps_and_a_filter_narrows_them(opened: Any) -> None:
    from selenium.webdriver.support.ui import Select

    row = opened.find_element("css selector", "#overview .level tbody tr")
    model = row.get_attribute("data-model")
    n = int(row.find_element("css selector", "td.pass-rate").text.split()[0].split("/")[1])
    row.click()
    shown = _wait_for_reps(opened)
    assert len(shown) == n
    assert {r.find_elements("css selector", "td")[1].text for r in shown} == {model}
    verdict = shown[0].get_attribute("data-verdict")
    Select(opened.find_element("id", "filter-verdict")).select_by_value(verdict)
    narrowed = _reps(opened)
    assert 0 < len(narrowed) <= n
    assert {r.get_attribute("data-verdict") for r in narrowed} == {verdict}


def test_a_loaded_rep_s_hostile_text_shows_as_text_and_never_runs(opened: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    _open_hostile_cell(opened)
    hostile = [r for r in _reps(opened) if "__evalkitXss" in r.text]
    assert len(hostile) == 1
    hostile[0].click()
    WebDriverWait(opened, 30).until(
        lambda x: x.find_elements("css selector", "#detail ol.timeline li")
    )
    detail = opened.find_element("id", "detail").text
    assert XSS_REASON in detail and XSS_JUDGE in detail
    assert opened.execute_script("return window.__evalkitXss === undefined")
    assert opened.find_elements("css selector", "#detail script, #detail img, #detail b") == []


def test_the_task_line_is_in_neither_the_page_nor_its_files_and_shows_masked(
    opened: Any, page: Path
) -> None:
    line = _task_line(Suite(REPO))
    files = [page, *sorted(evidence_folder(page).iterdir())]
    holding = [f.name for f in files if line in f.read_text(encoding="utf-8")]
    assert holding == [], holding
    breaking = [f.name for f in files[1:] if "</script" in f.read_text(encoding="utf-8").lower()]
    assert breaking == [], breaking
    _open_hostile_cell(opened)
    hostile = [r for r in _reps(opened) if "__evalkitXss" in r.text]
    shown = MASK in hostile[0].text
    assert shown


def test_a_folder_within_the_threshold_keeps_its_reps_in_the_page(
    opened: Any, page: Path, tmp_path: Path
) -> None:
    small = tmp_path / "small.html"
    write_html(Suite(REPO), page.parent / "results", small, "files")
    assert sorted(evidence_folder(small).glob("reps-*.js")) == []
    open_page(opened, small)
    assert len(_reps(opened)) == 16

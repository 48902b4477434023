"""The HTML report as a person sees it: opened from disk in headless Chromium, clicked through.

A fabricated results folder carries planted hostile strings (a note with <script>, an
onerror attribute in a diff, </script> in the transcript) and a transcript quoting a Task
line; the page must show the first as text, run none of them, and hide the last.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.suite.config import Suite
from evalkit.suite.task import MASK, read_task
from tests.browser.chromium import chromium, open_page
from tests.conftest import REPO
from tests.fabricated_results import (
    TOOL_MARK,
    XSS_DIFF,
    XSS_JUDGE,
    XSS_NOTE,
    XSS_TRANSCRIPT,
    make_folder,
)
from tests.unit.records.folder import calibration_folder

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / ".artifacts"


def _task_line(suite: Suite) -> str:
    """A long line of P1's Task, to plant where a model would quote it. Never printed."""
    lines = [x.strip() for x in read_task(suite.resolve("P1")).splitlines()]
    return max(lines, key=len)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = Suite(REPO)
    work = tmp_path_factory.mktemp("html") / "results"
    make_folder(suite, work, quoted=_task_line(suite))
    return work


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, ["--suite", str(REPO), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def page(folder: Path) -> Path:
    out = folder.parent / "report.html"
    _cli("report", str(folder), "--html", str(out), "--evidence", "inline")
    return out


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium() as d:
        yield d


@pytest.fixture()
def opened(driver: Any, page: Path) -> Any:
    open_page(driver, page)
    return driver


def _head(rate: dict[str, Any]) -> str:
    """A rate as the activation table shows it: k/n and the headline interval."""
    if not rate["n"]:
        return "0/0"
    head = "clustered_" if rate["clustered_low"] is not None else ""
    low, high = rate[f"{head}low"], rate[f"{head}high"]
    return f"{rate['k']}/{rate['n']} {_pct(low)}\u2013{_pct(high)}%"


def _pct(x: float) -> int:
    """JavaScript's Math.round, not Python's banker's rounding."""
    return int(x * 100 + 0.5)


ONE_SCENARIO = "(indep)"


def _fmt(rate: dict[str, Any]) -> str:
    if not rate["n"]:
        return "0/0"
    indep = f"{_pct(rate['low'])}\u2013{_pct(rate['high'])}%"
    reach = ""
    if rate["errors"]:
        reach = (
            f"; {rate['errors']} ERROR: {_pct(rate['k'] / rate['n'])}\u2013"
            f"{_pct(rate['errors_as_pass'])}% had they passed"
        )
    if rate["clustered_low"] is None:
        return f"{rate['k']}/{rate['n']} {indep} {ONE_SCENARIO}{reach}"
    return (
        f"{rate['k']}/{rate['n']} {_pct(rate['clustered_low'])}\u2013"
        f"{_pct(rate['clustered_high'])}% (indep {indep}, deff {rate['deff']:.1f}, "
        f"G {rate['scenarios']}){reach}"
    )


def _visible_reps(d: Any) -> list[Any]:
    return d.find_elements("css selector", "#rep-rows tr.rep")


def _open_rep(d: Any, index: int = 0) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    _visible_reps(d)[index].click()
    WebDriverWait(d, 30).until(lambda x: x.find_elements("css selector", "#detail ol.timeline li"))
    return d.find_element("css selector", "#detail")


def test_overview_numbers_equal_the_json_report(opened: Any, folder: Path) -> None:
    data = json.loads(_cli("report", str(folder), "--format", "json"))
    expected = [
        (c["model"], c["polarity"], _fmt(c["pass_rate"]), str(c["pass_rate"]["errors"]))
        for level in data["levels"]
        for c in level["cells"]
    ]
    shown = [
        (
            row.get_attribute("data-model"),
            row.get_attribute("data-polarity"),
            row.find_element("css selector", "td.pass-rate").text,
            row.find_element("css selector", "td.errors").text,
        )
        for row in opened.find_elements("css selector", "#overview .level tbody tr")
    ]
    assert shown == expected
    models = [(m["model"], _fmt(m["recall"]), _fmt(m["specificity"])) for m in data["models"]]
    shown_models = [
        (
            row.get_attribute("data-model"),
            row.find_element("css selector", "td.recall").text,
            row.find_element("css selector", "td.specificity").text,
        )
        for row in opened.find_elements("css selector", "#models tbody tr")
    ]
    assert shown_models == models
    banner = opened.find_element("css selector", "#publishability").text
    assert banner == data["publishability"]["verdict"]
    ARTIFACTS.mkdir(exist_ok=True)
    opened.save_screenshot(str(ARTIFACTS / "html-report-overview.png"))


def test_the_activation_table_equals_the_json_report(opened: Any, folder: Path) -> None:
    data = json.loads(_cli("report", str(folder), "--format", "json"))
    rates = ("when_wanted", "quiet_when_not")
    columns = ("when-wanted", "quiet-when-not")
    expected = [
        (a["skill"], a["side"], *(_head(a[r]) for r in rates), *(_fmt(a[r]) for r in rates))
        for a in data["activation"]
    ]
    shown = []
    for row in opened.find_elements("css selector", "#activation tbody tr"):
        cells = [row.find_element("css selector", f"td.{c}") for c in columns]
        texts = [c.text for c in cells] + [c.get_attribute("title") for c in cells]
        shown.append((row.get_attribute("data-skill"), row.get_attribute("data-side"), *texts))
    assert expected and shown == expected
    jot = opened.find_element("css selector", '#activation tr[data-skill="jot:jot"] td.skill')
    assert jot.get_attribute("title") == next(
        a["covers"] for a in data["activation"] if a["skill"] == "jot:jot"
    )


def test_a_drill_down_shows_a_tool_call_with_input_and_result(opened: Any) -> None:
    detail = _open_rep(opened)
    calls = detail.find_elements("css selector", "li.tl-call")
    assert calls, "no tool call in the timeline"
    first = calls[0].text
    assert "tool call: Write" in first and TOOL_MARK in first
    assert "File created successfully" in first
    assert "final result" in detail.text and "turns" in detail.text
    assert detail.find_elements("css selector", "pre.diff span.add")
    ARTIFACTS.mkdir(exist_ok=True)
    detail.screenshot(str(ARTIFACTS / "html-report-rep.png"))


def test_a_rep_shows_the_cost_estimate_of_its_row(opened: Any) -> None:
    detail = _open_rep(opened)
    terms = [t.text for t in detail.find_elements("css selector", "dl.kv dt")]
    values = [v.text for v in detail.find_elements("css selector", "dl.kv dd")]
    assert dict(zip(terms, values, strict=True)).get("cost (estimate)") == "$0.0123"


def test_a_filter_hides_what_it_should(opened: Any) -> None:
    from selenium.webdriver.support.ui import Select

    every = len(_visible_reps(opened))
    Select(opened.find_element("id", "filter-verdict")).select_by_value("ERROR")
    shown = _visible_reps(opened)
    assert 0 < len(shown) < every
    assert {r.get_attribute("data-verdict") for r in shown} == {"ERROR"}
    Select(opened.find_element("id", "filter-verdict")).select_by_value("")
    Select(opened.find_element("id", "filter-model")).select_by_value("haiku")
    models = {r.find_elements("css selector", "td")[1].text for r in _visible_reps(opened)}
    assert models == {"haiku"}
    opened.find_element("id", "clear-filters").click()
    assert len(_visible_reps(opened)) == every


def test_clicking_an_overview_cell_filters_the_reps(opened: Any) -> None:
    row = opened.find_element("css selector", "#overview .level tbody tr")
    model, polarity = row.get_attribute("data-model"), row.get_attribute("data-polarity")
    n = int(row.find_element("css selector", "td.pass-rate").text.split()[0].split("/")[1])
    row.click()
    shown = _visible_reps(opened)
    assert len(shown) == n
    assert {r.find_elements("css selector", "td")[1].text for r in shown} == {model}
    assert opened.find_element("id", "filter-polarity").get_attribute("value") == polarity


def test_planted_hostile_strings_show_as_text_and_never_run(opened: Any) -> None:
    detail = _open_rep(opened)
    for d in detail.find_elements("css selector", "details"):
        d.click()
    text = detail.text
    for planted in (XSS_NOTE, XSS_DIFF, XSS_TRANSCRIPT, XSS_JUDGE):
        assert planted in text, planted
    ran = opened.execute_script("return window.__evalkitXss === undefined ? null : 'ran'")
    assert ran is None
    assert opened.find_elements("css selector", "#detail script, #detail img, #detail b") == []


def test_the_task_is_nowhere_in_the_page_and_its_quote_is_masked(opened: Any, page: Path) -> None:
    line = _task_line(Suite(REPO))
    html = page.read_text(encoding="utf-8")
    in_file = line in html
    assert not in_file, "a Task line is in the HTML file"
    blobs = json.loads(
        re.search(r'id="evalkit-evidence">(.*?)</script>', html, re.S).group(1)  # type: ignore[union-attr]
    )
    unpacked = "".join(gzip.decompress(base64.b64decode(b)).decode() for b in blobs)
    in_evidence = line in unpacked
    assert not in_evidence, "a Task line is in the packed evidence"
    detail = _open_rep(opened)
    in_dom = line in detail.text
    assert not in_dom, "a Task line is in the rendered page"
    assert MASK in detail.text
    note = opened.find_element("id", "mask-note").text
    assert MASK in note and "masked" in note


def test_side_by_side_shows_the_same_scenario_under_two_models(opened: Any) -> None:
    from selenium.webdriver.support.ui import Select, WebDriverWait

    _open_rep(opened)
    picker = Select(opened.find_element("id", "compare-with"))
    other = next(o for o in picker.options if o.get_attribute("value") and "haiku" in o.text)
    picker.select_by_value(other.get_attribute("value"))
    WebDriverWait(opened, 30).until(
        lambda x: len(x.find_elements("css selector", "#detail .two .panel ol.timeline")) == 2
    )
    titles = [p.text for p in opened.find_elements("css selector", "#detail .two .panel h2")]
    assert len(titles) == 2
    assert titles[0].split(" \u00b7 ")[0] == titles[1].split(" \u00b7 ")[0]
    assert "sonnet" in titles[0] and "haiku" in titles[1]


def test_evidence_in_sibling_files_opens_from_disk(driver: Any, folder: Path) -> None:
    out = folder.parent / "split.html"
    _cli("report", str(folder), "--html", str(out), "--evidence", "files")
    files = sorted((folder.parent / "split.html.files").glob("rep-*.js"))
    assert files and all("</script" not in f.read_text().lower() for f in files)
    open_page(driver, out)
    detail = _open_rep(driver)
    assert TOOL_MARK in detail.text
    assert driver.execute_script("return window.__evalkitXss === undefined")


XSS_VARIANT = "<img src=x onerror=\"window.__evalkitXss='variant'\">"


def test_variants_inner_loop_and_a_missed_bar_are_shown_as_text(
    driver: Any, tmp_path: Path
) -> None:
    from evalkit.models import ExpectedBar
    from evalkit.records.pages.html import write_html
    from evalkit.records.report.build import build_report

    suite = Suite(REPO)
    suite.config.expected = {"L1": ExpectedBar(positive=0.95)}
    work = tmp_path / "results"
    make_folder(suite, work, scenarios=("P1", "N1"), variants=("suite", XSS_VARIANT),
                inner_loop=True)  # fmt: skip
    built = build_report(suite, work)
    write_html(suite, work, tmp_path / "r.html", "inline", report=built)
    open_page(driver, tmp_path / "r.html")
    assert "INNER LOOP" in driver.find_element("id", "inner-loop").text
    assert "EXPECTED BAR MISSED" in driver.find_element("id", "expected-missed").text
    shown = {td.text for td in driver.find_elements("css selector", "#overview .level td.variant")}
    assert shown == {"suite", XSS_VARIANT}
    verdicts = [
        tr.get_attribute("data-verdict")
        for tr in driver.find_elements("css selector", "#expected tbody tr")
    ]
    assert verdicts == [x.verdict for x in built.expected] and "miss" in verdicts
    assert driver.execute_script("return window.__evalkitXss === undefined")
    assert driver.find_elements("css selector", "#app img") == []


def test_a_calibration_folder_s_page_leads_with_its_calibration(
    driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("calibration") / "work"
    calibration_folder(Suite(REPO), work)
    page = work.parent / "report.html"
    _cli("report", str(work), "--html", str(page))
    open_page(driver, page)
    first = driver.find_element("css selector", "header > :first-child")
    assert first.get_attribute("id") == "calibration"
    assert first.find_element("tag name", "strong").text == "CALIBRATION: 3/3 cells as expected"
    items = [li.text for li in first.find_elements("tag name", "li")]
    assert "expected ERROR policy:fault-cut 1 row(s): P1-L1-reporting" in items
    assert driver.find_elements("css selector", "#publishability") == []
    shown = driver.find_element("tag name", "body").text
    assert ("PUBLISHABLE" in shown) is False


def test_each_positive_cell_draws_how_its_passes_were_earned(opened: Any, folder: Path) -> None:
    data = json.loads(_cli("report", str(folder), "--format", "json"))
    wanted = [
        sum(1 for n in c["b_via"].values() if n) + (c["axis_a"]["k"] > c["pass_rate"]["k"])
        for level in data["levels"]
        for c in level["cells"]
        if c["polarity"] == "positive" and c["pass_rate"]["n"]
    ]
    drawn = [
        len(row.find_elements("css selector", "td.earned .stack .seg"))
        for row in opened.find_elements("css selector", "#overview .level tbody tr")
        if row.get_attribute("data-polarity") == "positive"
    ]
    assert drawn == wanted and any(wanted)


def test_the_page_names_each_judge_and_warns_when_there_are_two(
    driver: Any, tmp_path: Path
) -> None:
    from evalkit.records.pages.html import write_html
    from evalkit.records.report.build import build_report

    suite = Suite(REPO)
    work = tmp_path / "results"
    make_folder(suite, work, scenarios=("P1", "N1"))
    built = build_report(suite, work).model_copy(
        update={"judges": {"claude:haiku": 3, "command:sha256:" + "ab" * 32: 1}}
    )
    write_html(suite, work, tmp_path / "r.html", "inline", report=built)
    open_page(driver, tmp_path / "r.html")
    chips = [c.text for c in driver.find_elements("css selector", "header .chip.judge")]
    assert chips[0] == "judged by: claude:haiku (3 rows)" and len(chips) == 2
    assert "JUDGES: 2" in driver.find_element("id", "judges-split").text


def test_rows_of_two_agents_and_two_judges_are_tabled_apart(driver: Any, tmp_path: Path) -> None:
    from evalkit.records.pages.html import write_html
    from tests.unit.compare.test_compare import ALL_PASS, WRITES_ALWAYS, fabricate

    suite = Suite(REPO)
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS, judge="claude:haiku")
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, judge="scripted", agent="codex")
    write_html(suite, work, tmp_path / "r.html", "inline")
    open_page(driver, tmp_path / "r.html")
    assert "2 agents (claude, codex)" in driver.find_element("id", "agents-split").text
    heads = [h.text for h in driver.find_elements("css selector", "#models thead th")]
    assert "judge" in heads and "agent" in heads
    shown = {
        (row.find_element("css selector", "td.agent").text,
         row.find_element("css selector", "td.specificity").text.split(" ")[0])
        for row in driver.find_elements("css selector", "#models tbody tr")
    }  # fmt: skip
    assert shown == {("claude", "6/6"), ("codex", "0/6")}
    level = driver.find_element("css selector", "#overview .level")
    assert [h.text for h in level.find_elements("css selector", "thead th")][1:3] == [
        "judge",
        "agent",
    ]


def test_rows_of_two_backends_are_tabled_apart_and_one_backend_gets_no_column(
    driver: Any, tmp_path: Path
) -> None:
    from evalkit.records.pages.html import write_html
    from tests.unit.compare.test_compare import ALL_PASS, WRITES_ALWAYS, fabricate

    suite = Suite(REPO)
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    write_html(suite, work, tmp_path / "one.html", "inline")
    open_page(driver, tmp_path / "one.html")
    assert not driver.find_elements("id", "backends-split")
    level = driver.find_element("css selector", "#overview .level")
    assert "backend" not in [h.text for h in level.find_elements("css selector", "thead th")]
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, confinement="docker")
    write_html(suite, work, tmp_path / "two.html", "inline")
    open_page(driver, tmp_path / "two.html")
    assert "2 confinement backends (bwrap, docker)" in driver.find_element(
        "id", "backends-split"
    ).text
    chips = {c.text for c in driver.find_elements("css selector", "header .chip.backend")}
    assert chips == {"confined by: bwrap (12 rows)", "confined by: docker (12 rows)"}
    shown = {
        (row.find_element("css selector", "td.backend").text,
         row.find_element("css selector", "td.specificity").text.split(" ")[0])
        for row in driver.find_elements("css selector", "#models tbody tr")
    }  # fmt: skip
    assert shown == {("bwrap", "6/6"), ("docker", "0/6")}
    level = driver.find_element("css selector", "#overview .level")
    assert "backend" in [h.text for h in level.find_elements("css selector", "thead th")]
    negatives = [
        (row.find_element("css selector", "td.pass-rate").text.split(" ")[0].split("/"), row.text)
        for row in level.find_elements("css selector", "tbody tr[data-polarity='negative']")
    ]
    assert len(negatives) == 2
    assert all((k == "0") == ("docker" in text) and n != "0" for (k, n), text in negatives)


def test_rows_of_two_cli_versions_are_tabled_apart_and_each_cell_finds_its_reps(
    driver: Any, folder: Path, tmp_path: Path
) -> None:
    import shutil

    work = tmp_path / "results"
    shutil.copytree(folder, work)
    lines = (work / "results.tsv").read_text().splitlines()
    column = lines[0].split("\t").index("cli_version")
    for number in range(1, len(lines)):
        cells = lines[number].split("\t")
        cells[column] = "2.1.327" if number % 2 else "2.1.328"
        lines[number] = "\t".join(cells)
    (work / "results.tsv").write_text("\n".join(lines) + "\n")
    data = json.loads(_cli("report", str(work), "--format", "json"))
    assert data["cli_versions"] == ["2.1.327", "2.1.328"]
    out = tmp_path / "report.html"
    _cli("report", str(work), "--html", str(out), "--evidence", "inline")
    open_page(driver, out)
    heads = [h.text for h in driver.find_elements("css selector", "#models thead th")]
    assert "cli" in heads
    expected = [(c["model"], c["cli_version"], c["pass_rate"]["n"])
                for level in data["levels"] for c in level["cells"]]  # fmt: skip
    rows = driver.find_elements("css selector", "#overview .level tbody tr")
    assert len(rows) == len(expected)
    for row, (model, version, n) in zip(rows, expected, strict=True):
        assert version in row.text and row.get_attribute("data-model") == model
        shown = row.find_element("css selector", "td.pass-rate").text.split()[0]
        assert int(shown.split("/")[1]) == n


def test_a_calibration_folder_s_page_draws_its_matrix_with_each_differing_cell_marked(
    driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("matrix") / "work"
    calibration_folder(Suite(REPO), work, expect={("N1-L1-reporting", "policy:oracle"): "FAIL"})
    page = work.parent / "report.html"
    _cli("report", str(work), "--html", str(page))
    open_page(driver, page)
    matrix = driver.find_element("css selector", "#calibration-matrix")
    policies = [
        r.get_attribute("data-policy") for r in matrix.find_elements("css selector", "tr.policy")
    ]
    assert policies == ["policy:oracle", "policy:fault-cut"]
    differs = [
        (
            c.find_element("xpath", "..").get_attribute("data-policy"),
            c.get_attribute("data-scenario"),
            c.text,
        )
        for c in matrix.find_elements("css selector", "td.cal.differs")
    ]
    assert differs == [("policy:oracle", "N1-L1-reporting", "PASS \u2260 FAIL")]
    assert len(matrix.find_elements("css selector", "td.cal.same")) == 2

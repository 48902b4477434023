"""split-reserve moves a seeded share of the run set into the reserve, and a plugin's own
eval cases are labelled as seen by their author, in the report and in its reserve."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.records.report.build import build_report
from evalkit.records.report.text import to_markdown
from evalkit.suite.catalog import load_catalog
from evalkit.suite.config import Suite, load_suite
from evalkit.suite.lock import freeze
from evalkit.suite.provenance import AUTHOR_RESERVE, OPEN
from tests.unit.records.folder import context, record_rep
from tests.unit.suite.test_plugin_evals import two_cases

pytestmark = pytest.mark.heavy

runner = CliRunner()


def record_one(suite: Suite, work: Path, scenario: str) -> None:
    work.mkdir()
    record_rep(context(suite, work), scenario, "sonnet", 1)


def split(suite: Path, *args: str) -> tuple[int, str]:
    got = runner.invoke(app, ["--suite", str(suite), "suite", "split-reserve", *args])
    return got.exit_code, got.output


def test_an_ordinary_suite_moves_the_seeded_share_into_scenarios_reserve(mini_root: Path) -> None:
    code, out = split(mini_root, "--share", "0.5", "--seed", "7")
    catalog = load_catalog(mini_root)
    moved = [s.id for s in catalog.scenarios("reserve")]
    assert code == 0, out
    assert len(moved) == 1 and len(catalog.scenarios("run")) == 1
    assert (mini_root / "scenarios-reserve" / f"{moved[0]}.md").is_file()
    assert moved[0] in out and "seed 7" in out


def test_the_same_seed_chooses_the_same_cases(mini_root: Path, tmp_path: Path) -> None:
    twin = shutil.copytree(mini_root, tmp_path / "twin")
    split(mini_root, "--share", "0.5", "--seed", "11")
    split(twin, "--share", "0.5", "--seed", "11")
    ids = [[s.id for s in load_catalog(r).scenarios("reserve")] for r in (mini_root, twin)]
    assert ids[0] == ids[1] and len(ids[0]) == 1


def test_a_frozen_suite_is_refused_in_one_line_and_nothing_moves(mini_root: Path) -> None:
    freeze(load_suite(mini_root))
    before = sorted(p.name for p in (mini_root / "scenarios").iterdir())
    code, out = split(mini_root, "--seed", "1")
    assert code == 2
    assert "frozen" in out and "freeze" in out and len(out.strip().splitlines()) == 1
    assert sorted(p.name for p in (mini_root / "scenarios").iterdir()) == before
    assert not list((mini_root / "scenarios-reserve").glob("*.md"))


def test_a_share_that_leaves_one_side_empty_is_refused(mini_root: Path) -> None:
    code, out = split(mini_root, "--share", "0.9", "--seed", "1")
    assert code == 2 and "--share" in out
    assert not load_catalog(mini_root).scenarios("reserve")


def test_a_plugin_eval_case_moves_whole_into_the_eval_folders_reserve(tmp_path: Path) -> None:
    plugin = two_cases(tmp_path)
    code, out = split(plugin, "--share", "0.5", "--seed", "3")
    suite = load_suite(plugin)
    reserve = [s.id for s in suite.scenarios("reserve")]
    assert code == 0, out
    assert len(reserve) == 1 and len(suite.scenarios("run")) == 1
    assert (plugin / "evals-reserve" / reserve[0] / "case.yaml").is_file()
    assert not (plugin / "evals" / reserve[0]).exists()
    assert not (suite.root / "scenarios" / f"{reserve[0]}.md").exists()


def test_a_moved_plugin_case_is_guarded_as_any_reserve(tmp_path: Path) -> None:
    from evalkit.errors import EvalkitError
    from evalkit.run.request import check_scenarios

    plugin = two_cases(tmp_path)
    split(plugin, "--share", "0.5", "--seed", "3")
    held = load_suite(plugin).scenarios("reserve")
    with pytest.raises(EvalkitError, match="reserve"):
        check_scenarios(held, allow_reserve=False)
    check_scenarios(held, allow_reserve=True)


def test_the_plugin_copy_the_agent_loads_holds_no_reserve(tmp_path: Path) -> None:
    plugin = two_cases(tmp_path)
    split(plugin, "--share", "0.5", "--seed", "3")
    copy = load_suite(plugin).plugin_dirs()[0]
    assert (copy / "skills").is_dir()
    assert sorted(p.name for p in copy.iterdir()) == [".claude-plugin", "skills"]


def test_a_plugin_eval_suites_sets_are_labelled_open_and_author_written(tmp_path: Path) -> None:
    plugin = two_cases(tmp_path)
    split(plugin, "--share", "0.5", "--seed", "3")
    suite = load_suite(plugin)
    work = tmp_path / "work"
    record_one(suite, work, suite.scenarios("run")[0].id)
    got = build_report(suite, work)
    assert got.sets == {"run": OPEN, "reserve": AUTHOR_RESERVE}
    assert {t.label for t in got.levels} == {OPEN}
    assert f"run set: {OPEN}" in to_markdown(got)


def test_the_html_page_carries_the_open_label(tmp_path: Path) -> None:
    import json

    from evalkit.records.pages.html import write_html

    suite = load_suite(two_cases(tmp_path))
    work = tmp_path / "work"
    record_one(suite, work, suite.scenarios("run")[0].id)
    write_html(suite, work, tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    start = page.index('id="evalkit-data">') + len('id="evalkit-data">')
    data = json.loads(page[start : page.index("</script>", start)])
    assert data["report"]["sets"]["run"] == OPEN


def test_an_ordinary_suite_keeps_its_plain_labels(mini_root: Path, tmp_path: Path) -> None:
    suite = load_suite(mini_root)
    work = tmp_path / "work"
    record_one(suite, work, suite.scenarios("run")[0].id)
    assert build_report(suite, work).sets == {"run": "measurement", "reserve": "held"}


def more_cases(root: Path, positives: int, negatives: int) -> None:
    """Extra run-set cases of each polarity, copies of the mini suite's pair under new ids."""
    for code, count in (("P", positives), ("N", negatives)):
        source = root / "scenarios" / f"{code}1-L1-demo.md"
        text = source.read_text(encoding="utf-8")
        for n in range(2, count + 1):
            copy = text.replace(f"{code}1-L1-demo", f"{code}{n}-L1-demo")
            (root / "scenarios" / f"{code}{n}-L1-demo.md").write_text(copy, encoding="utf-8")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_reserve_takes_each_polarity_in_its_share(
    mini_root: Path, tmp_path: Path, seed: int
) -> None:
    suite = shutil.copytree(mini_root, tmp_path / f"s{seed}")
    more_cases(suite, 6, 2)
    code, out = split(suite, "--share", "0.5", "--seed", str(seed))
    reserve = load_catalog(suite).scenarios("reserve")
    polarities = sorted(s.scenario.polarity for s in reserve)
    assert code == 0, out
    assert polarities == ["negative"] + ["positive"] * 3, [s.id for s in reserve]

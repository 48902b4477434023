"""Where `report --html OUT` may write: never over what evalkit reads, never over a file or
folder that is not its own, always whole, and a bad path is one line and exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.records.folder.workdir import Workdir
from evalkit.records.verify.record import record_key
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from tests.fabricated_results import make_folder

pytestmark = pytest.mark.heavy


@pytest.fixture
def work(mini_root: Path) -> Path:
    """A results folder of the mini suite, inside the suite as `results/` would be."""
    folder = mini_root / "results" / "w"
    make_folder(Suite(mini_root), folder, models=("sonnet",), scenarios=("P1", "N1"), reps=1)
    (folder / "verified.json").write_text("{}\n")
    return folder


def html(suite: Path, work: Path, out: Path, *extra: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(
        app,
        ["--suite", str(suite), "report", str(work), "--html", str(out), *extra],
        env={"COLUMNS": "200"},
    )
    return result.exit_code, result.stderr.strip().splitlines()


def _snapshot(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


READ_IN_WORKDIR = [
    "results.tsv",
    "plans.jsonl",
    "manifest.jsonl",
    "verified.json",
    "grid.lock",
    "evidence/page.html",
    "evidence/r20260101T000000Z-fab001/page.html",
    "subjects/page.html",
]
READ_IN_SUITE = [
    "evalkit.yaml",
    "evalkit.lock",
    "judge-rubric.md",
    "scenarios/P1-L1-demo.md",
    "scenarios/page.html",
    "scenarios-reserve/page.html",
    "fixtures/project/sync.py",
    "fixtures/vault/page.html",
]


@pytest.mark.parametrize("name", READ_IN_WORKDIR)
def test_a_page_over_what_the_results_folder_holds_is_refused(work: Path, name: str) -> None:
    mini = work.parent.parent
    out = work / name
    before = _snapshot(work)
    code, err = html(mini, work, out)
    assert code == 2 and len(err) == 1 and str(out) in err[0], err
    assert _snapshot(work) == before


@pytest.mark.parametrize("name", READ_IN_SUITE)
def test_a_page_over_the_suites_instrument_is_refused(work: Path, name: str) -> None:
    mini = work.parent.parent
    freeze(Suite(mini))
    out = mini / name
    before = _snapshot(mini)
    code, err = html(mini, work, out)
    assert code == 2 and len(err) == 1 and str(out) in err[0], err
    assert _snapshot(mini) == before


def test_a_page_over_a_results_file_a_plan_names_is_refused(work: Path) -> None:
    plans = work / "plans.jsonl"
    plans.write_text(plans.read_text().replace('"results":"results.tsv"', '"results":"rows.tsv"'))
    assert '"results":"rows.tsv"' in plans.read_text()
    (work / "rows.tsv").write_text("scenario\n")
    code, err = html(work.parent.parent, work, work / "rows.tsv")
    assert code == 2 and len(err) == 1 and "rows.tsv" in err[0], err
    assert (work / "rows.tsv").read_text() == "scenario\n"


def test_a_page_through_a_link_to_what_evalkit_reads_is_refused(work: Path, tmp_path: Path) -> None:
    link = tmp_path / "innocent.html"
    link.symlink_to(work / "plans.jsonl")
    before = (work / "plans.jsonl").read_bytes()
    code, err = html(work.parent.parent, work, link)
    assert code == 2 and len(err) == 1 and str(link) in err[0], err
    assert (work / "plans.jsonl").read_bytes() == before


def test_an_existing_file_that_is_not_an_evalkit_page_is_refused(
    work: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "notes.html"
    mine.write_text("<html><body>my own notes</body></html>\n")
    code, err = html(work.parent.parent, work, mine)
    assert code == 2 and len(err) == 1 and str(mine) in err[0], err
    assert mine.read_text() == "<html><body>my own notes</body></html>\n"


def test_an_evalkit_page_carries_a_generator_marker_and_is_replaced_whole(
    work: Path, tmp_path: Path
) -> None:
    out = tmp_path / "pages" / "r.html"
    assert html(work.parent.parent, work, out)[0] == 0
    assert '<meta name="generator" content="evalkit ' in out.read_text()[:2048]
    first = out.stat().st_ino
    code, err = html(work.parent.parent, work, out)
    assert code == 0, err
    assert out.stat().st_ino != first  # a new file renamed into place, not rewritten in place
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.html"]


def test_a_page_from_before_the_marker_is_still_recognised(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert html(work.parent.parent, work, out)[0] == 0
    text = out.read_text()
    start = text.index('<meta name="generator"')
    out.write_text(text[:start] + text[text.index(">", start) + 1 :])
    assert html(work.parent.parent, work, out)[0] == 0


def test_an_evidence_folder_beside_the_page_that_is_not_evalkits_is_refused(
    work: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.html"
    sibling = tmp_path / "r.html.files"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("mine\n")
    code, err = html(work.parent.parent, work, out, "--evidence", "files")
    assert code == 2 and len(err) == 1 and str(sibling) in err[0], err
    assert sorted(p.name for p in sibling.iterdir()) == ["keep.txt"]
    assert not out.exists()


def test_evalkits_own_evidence_folder_is_replaced_whole(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "pages" / "r.html"
    assert html(work.parent.parent, work, out, "--evidence", "files")[0] == 0
    sibling = out.parent / "r.html.files"
    made = sorted(p.name for p in sibling.iterdir())
    (sibling / "rep-99.js").write_text('evalkitEvidence(99,"");\n')  # from a larger folder
    assert html(work.parent.parent, work, out, "--evidence", "files")[0] == 0
    assert sorted(p.name for p in sibling.iterdir()) == made
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.html", "r.html.files"]


def test_a_folder_holding_a_cell_s_rep_list_is_evalkits_and_replaced_whole(
    work: Path, tmp_path: Path
) -> None:
    out = tmp_path / "pages" / "r.html"
    assert html(work.parent.parent, work, out, "--evidence", "files")[0] == 0
    sibling = out.parent / "r.html.files"
    made = sorted(p.name for p in sibling.iterdir())
    (sibling / "reps-7.js").write_text("evalkitReps(7,[]);\n")  # from a larger folder
    assert html(work.parent.parent, work, out, "--evidence", "files")[0] == 0
    assert sorted(p.name for p in sibling.iterdir()) == made


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("reps-1.js", "alert(1);\n"),
        ("reps-x.js", "evalkitReps(1,[]);\n"),
        ("rep-1.js", "evalkitReps(1,[]);\n"),
    ],
)
def test_a_script_in_the_folder_that_is_not_one_a_page_writes_is_refused(
    work: Path, tmp_path: Path, name: str, text: str
) -> None:
    out = tmp_path / "r.html"
    sibling = tmp_path / "r.html.files"
    sibling.mkdir()
    (sibling / name).write_text(text)
    code, err = html(work.parent.parent, work, out, "--evidence", "files")
    assert code == 2 and len(err) == 1 and str(sibling) in err[0], err
    assert (sibling / name).read_text() == text
    assert not out.exists()


def test_a_failed_write_leaves_the_old_page_and_nothing_beside_it(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "pages" / "r.html"
    assert html(work.parent.parent, work, out)[0] == 0
    before = out.read_bytes()

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    code, err = html(work.parent.parent, work, out)
    assert code == 2 and len(err) == 1 and str(out) in err[0], err
    assert out.read_bytes() == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.html"]


def test_a_page_inside_the_results_folder_changes_nothing_evalkit_reads(work: Path) -> None:
    suite = Suite(work.parent.parent)
    records = Workdir(work)

    def key() -> dict[str, str]:
        lines = records.read_evidence_index().items if records.has_evidence_index() else []
        return record_key(suite, records, records.read_plans().items, lines)

    before = key()
    code, err = html(work.parent.parent, work, work / "report.html")
    assert code == 0, err
    assert (work / "report.html").is_file()
    assert key() == before
    assert html(work.parent.parent, work, work / "report.html")[0] == 0


# --------------------------------------------------------------------------- bad paths


def test_a_page_path_under_a_file_is_one_line(work: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x\n")
    out = tmp_path / "afile" / "r.html"
    code, err = html(work.parent.parent, work, out)
    assert code == 2 and len(err) == 1 and str(out) in err[0], err
    assert (tmp_path / "afile").read_text() == "x\n"


def test_a_page_path_that_is_a_folder_is_one_line(work: Path, tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    code, err = html(work.parent.parent, work, tmp_path / "pages")
    assert code == 2 and len(err) == 1 and str(tmp_path / "pages") in err[0], err


def test_a_page_in_a_folder_that_cannot_be_written_is_one_line(
    work: Path, locked_folder: Path
) -> None:
    for out in (locked_folder / "r.html", locked_folder / "d" / "r.html"):
        code, err = html(work.parent.parent, work, out)
        assert code == 2 and len(err) == 1 and str(out) in err[0], err

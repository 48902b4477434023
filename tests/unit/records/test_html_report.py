"""The page builder without a browser: what goes into the file, and what never does."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.records.pages.html import (
    mask_transcript_line,
    script_json,
    shown_folder,
    write_html,
)
from evalkit.suite.config import Suite
from evalkit.suite.task import MASK, TaskMask, read_task, task_mask
from tests.conftest import REPO
from tests.fabricated_results import XSS_NOTE, XSS_TRANSCRIPT, make_folder


def test_script_json_cannot_end_a_script_or_open_a_comment() -> None:
    text = script_json({"a": "</script><!-- \u2028 \u2029 & <b>"})
    for bad in ("</script", "<!--", "\u2028", "\u2029", "<", ">"):
        assert bad not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028 \u2029 & <b>"}


def test_a_task_mask_hides_whole_lines_and_never_shows_them() -> None:
    mask = TaskMask(["Please refactor the exporter carefully", "ok"])
    assert "exporter" not in repr(mask)
    shown, n = mask.mask("intro\n> Please refactor the exporter carefully now\nok\nbye")
    assert (shown, n) == (f"intro\n{MASK}\nok\nbye", 1)


def test_a_task_line_inside_an_escaped_json_string_is_masked() -> None:
    mask = TaskMask(['Fix the "export" path today'])
    line = json.dumps({"type": "assistant", "text": 'You said:\nFix the "export" path today\n'})
    shown, n = mask_transcript_line(line, mask)
    assert n == 1 and "export" not in shown and MASK in json.loads(shown)["text"]
    untouched = json.dumps({"type": "user", "text": "nothing here"})
    assert mask_transcript_line(untouched, mask) == (untouched, 0)


def _task_lines(suite: Suite) -> list[str]:
    return [
        line.strip()
        for s in suite.scenarios("all")
        for line in read_task(s).splitlines()
        if len(line.strip()) >= 12
    ]


def test_the_page_holds_no_task_line_and_no_raw_hostile_markup(tmp_path: Path) -> None:
    suite = Suite(REPO)
    quoted = max(_task_lines(suite), key=len)
    work = tmp_path / "w"
    make_folder(suite, work, quoted=quoted, reps=1)
    stats = write_html(suite, work, tmp_path / "r.html", "inline")
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    blobs = json.loads(
        re.search(r'id="evalkit-evidence">(.*?)</script>', html, re.S).group(1)  # type: ignore[union-attr]
    )
    unpacked = "".join(gzip.decompress(base64.b64decode(b)).decode() for b in blobs)
    leaked = [n for n, line in enumerate(_task_lines(suite)) if line in html or line in unpacked]
    assert leaked == [], "Task lines found in the page (indexes only shown)"
    assert stats.masked_lines >= len(blobs)
    assert XSS_TRANSCRIPT in unpacked  # kept as data, compressed
    # only the page's own three script elements, whatever the data held
    assert html.count("<script") == 3
    assert XSS_NOTE not in html


def test_sibling_evidence_files_are_escaped_script(tmp_path: Path) -> None:
    suite = Suite(REPO)
    make_folder(suite, tmp_path / "w", reps=1, scenarios=("P1",))
    stats = write_html(suite, tmp_path / "w", tmp_path / "r.html", "files")
    assert stats.sibling_dir is not None
    for path in stats.sibling_dir.glob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert re.fullmatch(r'evalkitEvidence\(\d+,"[A-Za-z0-9+/=]*"\);\n', text)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'id="evalkit-evidence"' not in html


def test_task_mask_covers_every_set(suite: Suite) -> None:
    assert repr(task_mask(suite.scenarios("all"))).startswith("TaskMask(")


def test_pages_of_two_copies_of_a_folder_under_two_roots_are_the_same(tmp_path: Path) -> None:
    """A page is meant to be shared: it shows folders relative to the suite or the results
    folder, never where this machine keeps them."""
    suite = Suite(REPO)
    first = tmp_path / "one" / "deep" / "results"
    make_folder(suite, first, reps=1, scenarios=("P1", "N1"))
    second = Path(shutil.copytree(first, tmp_path / "two" / "results", symlinks=True))
    pages = []
    for work in (first, second):
        write_html(suite, work, work.parent / "page.html", "inline")
        pages.append((work.parent / "page.html").read_text(encoding="utf-8"))
    same = pages[0] == pages[1]
    at = next((i for i, (a, b) in enumerate(zip(*pages, strict=False)) if a != b), None)
    assert same, f"the pages differ from character {at}"
    named = [str(p) for p in (tmp_path, REPO) if any(str(p) in page for page in pages)]
    assert named == [], "a page names a local absolute path"


def test_a_folder_inside_the_suite_is_shown_relative_to_it(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    assert shown_folder(suite, suite / "results" / "demo") == "results/demo"
    assert shown_folder(suite, tmp_path / "elsewhere" / "demo") == "demo"


def test_evidence_too_big_to_inline_is_written_out_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the inline limit the page streams each rep's evidence to its sibling folder,
    so a 100,000-rep folder is never held in memory whole."""
    import evalkit.records.pages.html as html_report

    suite = Suite(REPO)
    work = tmp_path / "w"
    rows = make_folder(suite, work, reps=2)
    monkeypatch.setattr(html_report, "INLINE_LIMIT", 1)
    read = html_report._detail
    written: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        written.append(len(list(tmp_path.rglob("rep-*.js"))))
        return read(*args, **kwargs)

    monkeypatch.setattr(html_report, "_detail", spy)
    stats = write_html(suite, work, tmp_path / "r.html", "auto")
    assert stats.sibling_dir is not None
    assert len(list(stats.sibling_dir.glob("rep-*.js"))) == len(rows)
    assert len(written) == len(rows) and written[-1] >= len(rows) - 2, written

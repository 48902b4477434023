"""The shareable page masks a Task line a model quotes not quite verbatim: upper-cased, with a
few characters cut, or split over two lines; and it counts what it masked. Assertions are on
booleans and counts: no Task text is printed, whatever fails."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.records.pages.html import write_html
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.conftest import REPO
from tests.fabricated_results import make_folder

pytestmark = pytest.mark.heavy

RUN_WORDS = 8
"""The run of words in a row the mask treats as Task text (suite/task.py)."""


def _longest_task_line(suite: Suite) -> str:
    lines = [x.strip() for s in suite.scenarios("all") for x in read_task(s).splitlines()]
    return max(lines, key=lambda x: len(x.split()))


def _split(line: str) -> str:
    words = line.split()
    half = len(words) // 2
    return " ".join(words[:half]) + "\n" + " ".join(words[half:])


NEAR: dict[str, Callable[[str], str]] = {
    "upper-cased": str.upper,
    "three characters cut at each end": lambda x: x[3:-3],
    "split over two lines": _split,
}


def _page_text(html: str) -> str:
    blobs = json.loads(
        re.search(r'id="evalkit-evidence">(.*?)</script>', html, re.S).group(1)  # type: ignore[union-attr]
    )
    unpacked = "".join(gzip.decompress(base64.b64decode(b)).decode() for b in blobs)
    return html + unpacked


def _folded_words(text: str) -> list[str]:
    return [w.casefold() for w in re.findall(r"\w+", text.replace("\\n", " "))]


@pytest.mark.parametrize("how", sorted(NEAR))
def test_a_task_line_quoted_not_quite_verbatim_is_masked_on_the_page(
    tmp_path: Path, how: str
) -> None:
    suite = Suite(REPO)
    line = _longest_task_line(suite)
    assert len(line.split()) > RUN_WORDS + 1
    work = tmp_path / "w"
    make_folder(suite, work, quoted=NEAR[how](line), reps=1, scenarios=("P1",))
    stats = write_html(suite, work, tmp_path / "r.html", "inline")
    page = _folded_words(_page_text((tmp_path / "r.html").read_text(encoding="utf-8")))
    task = _folded_words(line)
    runs = {tuple(task[i : i + RUN_WORDS]) for i in range(len(task) - RUN_WORDS + 1)}
    leaked = any(tuple(page[i : i + RUN_WORDS]) in runs for i in range(len(page)))
    assert not leaked, f"a run of {RUN_WORDS} Task words is on the page ({how})"
    assert stats.masked_lines > 0

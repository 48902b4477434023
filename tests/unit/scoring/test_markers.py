"""Words that name the measurement are found as whole words, ordinary text is not, and
`freeze` refuses a Task or a fixture file holding one without quoting the Task."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.scoring.world.markers import Markers
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze

IDS = ["P1-L1-reporting", "W1-worker-concurrency"]


@pytest.mark.parametrize(
    "text",
    [
        "Recent commits: 722ea58 fixture for P1-L1-reporting",
        "cwd /tmp/evalkit-rep-x/project",
        "IS_SANDBOX=1",
        "see rep 3 of the grid",
        "the W1 case",
        "this is a scripted model",
        "the Holdout set",
    ],
)
def test_a_marker_is_found_wherever_it_stands_as_a_word(text: str) -> None:
    assert Markers(IDS).first(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "I'll add a test file for the parser",
        "set the test environment variable",
        "sandboxes and fixtures_dir and evaluate()",
        "P10 is not P1's neighbour: P100",
        "replace 3 items",
    ],
)
def test_ordinary_text_holds_no_marker(text: str) -> None:
    assert Markers(["P2-L1-x"]).first(text) is None


def test_a_word_the_project_uses_ordinarily_can_be_allowed_but_never_evalkit() -> None:
    markers = Markers(IDS, ordinary=["policy", "evalkit"])
    assert markers.first("the retry policy") is None
    assert markers.first("evalkit") == "evalkit"


def test_freeze_refuses_a_fixture_file_with_a_marker_and_names_it(mini_root: Path) -> None:
    (mini_root / "fixtures" / "project" / "notes.txt").write_text("built for the calibration\n")
    with pytest.raises(RefusedError) as refused:
        freeze(Suite(mini_root))
    assert "marker:fixture:project/notes.txt:calibration" in str(refused.value)


def test_freeze_refuses_a_task_with_a_marker_without_quoting_it(mini_root: Path) -> None:
    path = mini_root / "scenarios" / "P1-L1-demo.md"
    task = "Please tidy the sync job; this sandbox is throwaway."
    path.write_text(path.read_text().replace("A held-out task for the demo positive.", task))
    with pytest.raises(RefusedError) as refused:
        freeze(Suite(mini_root))
    said = str(refused.value)
    assert "marker:task:P1-L1-demo:sandbox" in said
    assert "tidy the sync job" not in said

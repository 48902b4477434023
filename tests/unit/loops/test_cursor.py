"""The watch cursor moves only on an outcome that is the release's, and keeps a release
from being tested twice unless more reps could now tell what fewer could not."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.loops.cursor import CURSOR_NAME, Cursor, CursorEntry


def _entry(outcome: int, reps: int = 1, pin: str = "2.1.327") -> CursorEntry:
    return CursorEntry(outcome=outcome, pin=pin, reps=reps, folder="claude-2.1.328-vs-2.1.327")


@pytest.fixture
def cursor(tmp_path: Path) -> Cursor:
    return Cursor.load(tmp_path / CURSOR_NAME)


def test_a_missing_cursor_has_every_release_still_to_run(cursor: Cursor) -> None:
    assert cursor.to_run("claude", "2.1.328", "2.1.327", reps=1)


@pytest.mark.parametrize("outcome", [0, 1, 3])
def test_an_outcome_of_the_release_is_recorded_and_read_back(cursor: Cursor, outcome: int) -> None:
    assert cursor.advance("claude", "2.1.328", _entry(outcome))
    again = Cursor.load(cursor.path).tested("claude", "2.1.328", "2.1.327")
    assert again is not None and again.outcome == outcome


def test_a_run_that_could_not_be_trusted_leaves_the_cursor_unwritten(cursor: Cursor) -> None:
    assert not cursor.advance("claude", "2.1.328", _entry(2))
    assert not cursor.path.exists()


@pytest.mark.parametrize("outcome", [0, 1])
def test_a_release_that_held_or_was_worse_is_not_run_again_at_any_size(
    cursor: Cursor, outcome: int
) -> None:
    cursor.advance("claude", "2.1.328", _entry(outcome, reps=1))
    assert not cursor.to_run("claude", "2.1.328", "2.1.327", reps=10)


def test_a_release_that_could_not_be_told_runs_again_only_with_more_reps(cursor: Cursor) -> None:
    cursor.advance("claude", "2.1.328", _entry(3, reps=2))
    ran = [cursor.to_run("claude", "2.1.328", "2.1.327", reps=n) for n in (1, 2, 3)]
    assert ran == [False, False, True]


def test_an_outcome_against_another_pin_does_not_answer_this_one(cursor: Cursor) -> None:
    cursor.advance("claude", "2.1.328", _entry(0, pin="2.1.326"))
    assert cursor.to_run("claude", "2.1.328", "2.1.327", reps=1)


def test_a_cursor_that_does_not_read_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / CURSOR_NAME
    path.write_text('{"agents": {"claude": {"2.1.328": {"outcome": "fine"}}}}', encoding="utf-8")
    with pytest.raises(ConfigError, match=CURSOR_NAME) as refused:
        Cursor.load(path)
    assert "\n" not in str(refused.value)

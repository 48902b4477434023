"""The one topic matcher every checker uses: a written file is on topic by its path or text."""

from __future__ import annotations

import pytest

from evalkit.scoring.topics import check_topic_patterns, topic_matches


def test_a_file_is_on_topic_by_its_path_or_its_text_in_any_case() -> None:
    assert topic_matches(["retr(y|ies)"], "docs/adr/0007-RETRIES.md", "")
    assert topic_matches(["retr(y|ies)"], "notes/x.md", "We add Retries to the queue.")
    assert not topic_matches(["retr(y|ies)"], "notes/x.md", "We add caching.")


def test_a_pattern_that_does_not_compile_is_named() -> None:
    with pytest.raises(ValueError, match=r"pattern '\(unclosed' does not compile"):
        check_topic_patterns(["fine", "(unclosed"])
    assert check_topic_patterns(["fine"]) == ["fine"]

"""`policy:phrase:<words>` reads the skill listing the CLI sent, never the user's words."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.errors import ConfigError
from evalkit.reference.phrase import Phrase
from evalkit.suite.config import Suite

SKILLS = ["notes:keep"]


def body(listing: str, user: str = "Please fix the sync job.") -> dict[str, Any]:
    reminder = f"<system-reminder>\nSkills available:\n- {listing}\n</system-reminder>"
    return {
        "system": "You are a coding agent.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": reminder}]},
            {"role": "user", "content": [{"type": "text", "text": user}]},
        ],
    }


def test_a_name_is_its_words_joined_by_plus() -> None:
    assert Phrase.parse("phrase:Outlives+the+task") == Phrase("outlives the task")
    assert Phrase.parse("oracle") is None


def test_a_name_with_no_words_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="policy:phrase:WORD"):
        Phrase.parse("phrase:")


def test_a_positive_acts_when_the_skill_line_holds_the_phrase() -> None:
    phrase = Phrase("outlives the task")
    said = body("notes:keep: Keep what Outlives the   task.")
    assert phrase.acts(said, SKILLS, positive=True)


def test_a_positive_holds_back_when_only_the_user_says_the_phrase() -> None:
    phrase = Phrase("outlives the task")
    said = body("notes:keep: Format a note.", user="This outlives the task.")
    assert not phrase.acts(said, SKILLS, positive=True)


def test_a_positive_holds_back_when_another_skill_holds_the_phrase() -> None:
    phrase = Phrase("outlives the task")
    assert not phrase.acts(body("jot:scratch: what outlives the task"), SKILLS, positive=True)


def test_a_negative_acts_only_when_the_skill_line_says_always() -> None:
    phrase = Phrase("outlives the task")
    assert phrase.acts(body("notes:keep: Always keep a note."), SKILLS, positive=False)
    assert not phrase.acts(body("notes:keep: Keep what outlives the task."), SKILLS, False)
    assert not phrase.acts(body("notes:keep: Keep notes, alwaysish."), SKILLS, False)


def test_an_agent_of_another_wire_is_refused_before_any_plan(suite: Suite) -> None:
    from evalkit.reference.scripted import POLICIES

    assert POLICIES.accepts(suite, "phrase:outlives+the+task", "claude")
    with pytest.raises(ConfigError, match="agent codex speaks another wire"):
        POLICIES.accepts(suite, "phrase:outlives+the+task", "codex")

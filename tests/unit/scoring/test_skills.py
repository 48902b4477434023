"""Which skills fired, and the two misroutes between the subject and its neighbours."""

from __future__ import annotations

from pathlib import Path

from evalkit.models import Scenario, ScenarioFile, ToolCall, Transcript
from evalkit.scoring.skills import Skills, activation_flags, fired

SKILLS = Skills(subject=("os-vault:write",), neighbours=("jot:jot", "check-runner:run"))


def scenario(polarity: str, wanted: str | None = None) -> ScenarioFile:
    front = Scenario.model_validate({
        "id": "X1-L1-a", "polarity": polarity, "level": "L1", "set": "run", "topic": "t",
        "premise": {"file": "f", "marker": "m"}, "wanted": wanted,
    })  # fmt: skip
    return ScenarioFile(front, Path("x.md"), "0" * 64, "")


def calls(*skills: str, error: bool = False) -> Transcript:
    made = [
        ToolCall(id=str(i), name="Skill", input={"skill": s}, result="ok", is_error=error)
        for i, s in enumerate(skills)
    ]
    return Transcript(tool_calls=made)


def test_a_neighbour_firing_on_a_positive_the_subject_missed_is_flagged_as_won() -> None:
    flags = activation_flags(SKILLS, scenario("positive"), calls("jot:jot"))
    assert flags == ["fired:jot:jot", "neighbour-won:jot:jot"]


def test_a_neighbour_firing_beside_the_subject_wins_nothing() -> None:
    flags = activation_flags(SKILLS, scenario("positive"), calls("jot:jot", "os-vault:write"))
    assert flags == ["fired:jot:jot", "fired:os-vault:write"]


def test_the_subject_firing_where_a_neighbour_was_wanted_is_flagged_as_stolen() -> None:
    flags = activation_flags(SKILLS, scenario("negative", "jot:jot"), calls("write"))
    assert flags == ["fired:os-vault:write", "subject-stole:jot:jot"]


def test_the_wanted_neighbour_firing_too_is_no_theft() -> None:
    both = calls("os-vault:write", "jot:jot")
    assert "subject-stole:jot:jot" not in activation_flags(
        SKILLS, scenario("negative", "jot:jot"), both
    )


def test_a_call_the_cli_rejected_fired_nothing() -> None:
    assert fired(calls("jot:jot", error=True), SKILLS) == []


def test_a_suite_without_neighbours_gets_no_activation_flags() -> None:
    assert activation_flags(None, scenario("positive"), calls("jot:jot")) == []
    alone = Skills(subject=("os-vault:write",))
    assert activation_flags(alone, scenario("positive"), calls("os-vault:write")) == []

"""`policy:propose:<plan>` plays each round's edits of the skill through Read, Edit and Write."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.reference.propose import NOTHING, Edit, ProposePlan, skill_target
from tests.tuning_suite import SKILL, skill_text

NOTES = "fixtures/plugins/notes"


def wording(tmp_path: Path, text: str | None = None) -> Path:
    root = tmp_path / "wording"
    (root / SKILL).parent.mkdir(parents=True)
    (root / SKILL).write_text(text or skill_text("How to format a note."), encoding="utf-8")
    return root


def calls(plan: ProposePlan, round_no: int, root: Path) -> list[tuple[str, dict[str, str]]]:
    script = plan.script(round_no, root, [NOTES])
    return [(b.name, b.input) for s in script.steps for b in s.blocks if b.type == "tool_use"]


def test_a_plan_is_its_rounds_joined_by_slash_and_edits_by_comma() -> None:
    plan = ProposePlan.parse("propose:description=Keep+a+note./-/description+=always,name=k")
    assert plan is not None
    assert plan.rounds == (
        (Edit("description", "Keep a note."),),
        (),
        (Edit("description", "always", append=True), Edit("name", "k")),
    )
    assert ProposePlan.parse("phrase:keep") is None


@pytest.mark.parametrize("name", ["propose:", "propose:description", "propose:Description=x",
                                  "propose:description=two words", "propose:a=b//c=d"])  # fmt: skip
def test_a_plan_that_is_no_edit_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(ConfigError, match="expected policy:propose:ROUND") as refused:
        ProposePlan.parse(name)
    assert "\n" not in str(refused.value)


def test_a_round_reads_the_skill_then_edits_its_one_line(tmp_path: Path) -> None:
    root = wording(tmp_path)
    plan = ProposePlan.parse("propose:description=Keep+what+outlives+the+task.")
    assert plan is not None
    path = str(root / SKILL)
    assert calls(plan, 1, root) == [
        ("Read", {"file_path": path}),
        ("Edit", {"file_path": path, "old_string": "description: How to format a note.",
                  "new_string": "description: Keep what outlives the task."}),
    ]  # fmt: skip


def test_an_edit_appends_to_the_line_with_plus_equals(tmp_path: Path) -> None:
    root = wording(tmp_path)
    plan = ProposePlan.parse("propose:description+=Always.")
    assert plan is not None
    (_, edit) = calls(plan, 1, root)[1]
    assert edit["new_string"] == "description: How to format a note. Always."


def test_a_field_the_front_matter_lacks_is_written_whole(tmp_path: Path) -> None:
    root = wording(tmp_path)
    plan = ProposePlan.parse("propose:when=Always")
    assert plan is not None
    name, call = calls(plan, 1, root)[1]
    assert name == "Write"
    assert call["content"].startswith("---\nname: keep\ndescription: How to format a note.\n"
                                      "when: Always\n---\n")  # fmt: skip


def test_a_round_past_the_plan_or_marked_none_proposes_nothing(tmp_path: Path) -> None:
    root = wording(tmp_path)
    plan = ProposePlan.parse("propose:-/description=x")
    assert plan is not None
    for round_no in (1, 3):
        script = plan.script(round_no, root, [NOTES])
        assert script.steps == [] and script.final_text == NOTHING
    assert calls(plan, 2, root)[0][0] == "Read"


def test_the_target_is_the_first_skill_under_the_paths(tmp_path: Path) -> None:
    root = wording(tmp_path)
    other = root / NOTES / "skills/another/SKILL.md"
    other.parent.mkdir(parents=True)
    other.write_text(skill_text("x"), encoding="utf-8")
    assert skill_target(root, [NOTES]) == other
    assert skill_target(root, [SKILL.as_posix()]) == root / SKILL
    assert skill_target(root, [f"{NOTES}/.claude-plugin"]) is None

"""A positive whose rules ask for the subject's skill, failed because a neighbour's fired:
the rules checker names that on axis A (`neighbour-won:<skill>`), since in such a suite the
misroute is the reason the rule failed. Rules that never name the subject's skill leave it
a flag, as every checker's rows carry it (`scoring/skills.py`)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from evalkit.checkers.rules.conditions import Node, SkillSpec
from evalkit.checkers.rules.evaluate import skill_matches
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.skills import NEIGHBOUR_WON, activation_flags


def _skill_specs(value: object) -> Iterator[SkillSpec]:
    if isinstance(value, SkillSpec):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _skill_specs(getattr(value, name))
    elif isinstance(value, list):
        for item in value:
            yield from _skill_specs(item)


def names_subject_skill(condition: Node | None, subject: tuple[str, ...]) -> bool:
    """Whether a condition asks anywhere for one of the subject's skills."""
    specs = list(_skill_specs(condition))
    return any(skill_matches(spec.name, skill) for spec in specs for skill in subject)


def neighbour_won(inp: CheckInput, condition: Node | None) -> list[str]:
    """`neighbour-won:<skill>` of a positive whose axis-A condition names the subject's
    skill; nothing otherwise."""
    skills = inp.instrument.skills
    if skills is None or not names_subject_skill(condition, skills.subject):
        return []
    flags = activation_flags(skills, inp.scenario, inp.transcript)
    return [f for f in flags if f.startswith(NEIGHBOUR_WON)]

"""The report's activation table: per skill, did it fire when a user would want it and stay
quiet when not, among the neighbours a suite installs.

A verdict reads the subject's effect; it cannot say that a neighbour took the work or that
the subject took a neighbour's. This table reads the rows' `fired:` flags (a call the CLI
carried out, frozen with the scoring code) against what each scenario says a user wants:

- a neighbour's skill is wanted where the scenario names it (`wanted:`);
- a skill of the subject is wanted on a positive that names no wanted neighbour.

Each rate is the report's own: ERROR rows stay in n and are never the good outcome, and
the interval is clustered by scenario. A subject with several skills is measured skill by
skill against every positive, so "fired when wanted" of one of them is a lower bound of
the subject's; the row of the skill a scenario's rules name is the one to read.
"""

from __future__ import annotations

from collections.abc import Iterable

from evalkit.models import ResultRow, ScenarioFile, ScenarioSet
from evalkit.records.report.model import SETS, Activation, ModelKey, SubjectKey
from evalkit.records.report.tally import rate_of
from evalkit.scoring.skills import FIRED, Skills
from evalkit.suite.catalog import plugin_manifest_name
from evalkit.suite.config import Suite

Keyed = tuple[ScenarioFile, ResultRow, ModelKey, SubjectKey]
"""A row with its scenario and the factors the report splits it by."""

_Key = tuple[ScenarioSet, ModelKey, SubjectKey, str]


def fired_skills(row: ResultRow) -> set[str]:
    """The skills a row's flags say fired."""
    return {f[len(FIRED) :] for f in row.flags.split(";") if f.startswith(FIRED)}


def is_wanted(skill: str, skills: Skills, scenario: ScenarioFile) -> bool:
    """Whether a user would want SKILL on this scenario (see the module's rule)."""
    wanted = scenario.scenario.wanted
    if skill in skills.neighbours:
        return wanted == skill
    return scenario.scenario.polarity == "positive" and wanted is None


def _outcome(row: ResultRow, good: bool) -> str:
    """A row as the rate counts it: ERROR stays ERROR, else PASS for the good outcome."""
    return "ERROR" if row.verdict == "ERROR" else ("PASS" if good else "FAIL")


def neighbour_covers(suite: Suite) -> dict[str, str]:
    """Each neighbour plugin's name -> what the suite says it is for."""
    return {
        plugin_manifest_name(folder, str(suite.config_path)): entry.covers
        for folder, entry in zip(suite.neighbours, suite.config.neighbours, strict=True)
    }


def _order(key: _Key) -> tuple[int, ModelKey, SubjectKey]:
    return (SETS.index(key[0]), key[1], key[2])


def activation_table(suite: Suite, keyed: Iterable[Keyed]) -> list[Activation]:
    """One entry per set, model, subject and known skill; none for a suite without
    neighbours (its rows name no firing to count)."""
    skills = suite.skills
    if skills is None:
        return []
    wanted: dict[_Key, list[tuple[str, str]]] = {}
    unwanted: dict[_Key, list[tuple[str, str]]] = {}
    for sf, row, model, subject in keyed:
        got = fired_skills(row)
        for skill in skills.known():
            key = (sf.scenario.set, model, subject, skill)
            if is_wanted(skill, skills, sf):
                wanted.setdefault(key, []).append((_outcome(row, skill in got), sf.id))
            else:
                unwanted.setdefault(key, []).append((_outcome(row, skill not in got), sf.id))
    covers = neighbour_covers(suite)
    return [
        Activation(
            set=key[0],
            model=key[1][0],
            cli_version=key[1][1],
            judge=key[1][2],
            agent=key[1][3],
            backend=key[1][4],
            variant=key[2][0],
            subject_hash=key[2][1],
            skill=key[3],
            side="neighbour" if key[3] in skills.neighbours else "subject",
            covers=covers.get(key[3].partition(":")[0], ""),
            when_wanted=rate_of(wanted.get(key, [])),
            quiet_when_not=rate_of(unwanted.get(key, [])),
        )
        for key in sorted(dict.fromkeys([*wanted, *unwanted]), key=_order)
    ]

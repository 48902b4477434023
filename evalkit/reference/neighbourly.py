"""`policy:neighbour-wins` and `policy:subject-steals`: the two misroutes between the
subject and its neighbours, played through the real CLI so the rows must name them.

- `neighbour-wins`: on a positive, a neighbour's skill fires and the work is left undone
  (the checker's never-acting policy after the neighbour's call); it must score as that
  policy does and be flagged `neighbour-won:<skill>`. Elsewhere the ideal.
- `subject-steals`: on a scenario that names the neighbour a user would want, the
  subject's skill fires and its work is done (the checker's always-acting policy after the
  subject's call), flagged `subject-stole:<skill>`. Elsewhere the ideal.

Both exist only in a suite with neighbours; the skills the CLI must resolve are the ones
`suite/neighbours.py` lists, so a neighbour the CLI did not load fails its call, nothing
fires, and the cell shows it.
"""

from __future__ import annotations

from evalkit.checkers.behaviour import Expectation, PolicyPlan, SelfTestCase
from evalkit.errors import ConfigError
from evalkit.models import Step, ToolUseBlock
from evalkit.scoring.skills import NEIGHBOUR_WON, SUBJECT_STOLE
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile

NEIGHBOUR_WINS = "neighbour-wins"
SUBJECT_STEALS = "subject-steals"
MISROUTES = (NEIGHBOUR_WINS, SUBJECT_STEALS)


def _first(suite: Suite, prefix: str, name: str) -> str:
    policies = [p.name for p in suite.reference.policies]
    found = next((p for p in policies if p.startswith(prefix)), None)
    if found is None:
        raise ConfigError(f"policy:{name}: checker {suite.checker.name} has no {prefix} policy")
    return found


def _after_skill(plan: PolicyPlan, skill: str, expect: Expectation) -> PolicyPlan:
    call = Step(blocks=[ToolUseBlock(name="Skill", input={"skill": skill})])
    script = plan.script.model_copy(update={"steps": [call, *plan.script.steps]})
    return PolicyPlan(script, expect, plan.judge_answer, list(plan.notes))


def misroute_plan(suite: Suite, name: str, scenario: ScenarioFile) -> PolicyPlan:
    """The plan `name` (one of MISROUTES) plays on `scenario`."""
    skills = suite.skills
    if skills is None or not skills.neighbours:
        raise ConfigError(f"policy:{name}: the suite declares no neighbours")
    ideal = suite.reference.plan_policy(suite.reference.policies[0].name, scenario)
    wanted = scenario.scenario.wanted
    if name == NEIGHBOUR_WINS and scenario.scenario.polarity == "positive":
        skill = next(s for s in skills.neighbours if s != wanted)
        never = suite.reference.plan_policy(_first(suite, "never-", name), scenario)
        return _after_skill(never, skill, Expectation(never.expect.verdict, NEIGHBOUR_WON + skill))
    if name == SUBJECT_STEALS and wanted is not None and skills.subject:
        always = suite.reference.plan_policy(_first(suite, "always-", name), scenario)
        expect = Expectation(always.expect.verdict, SUBJECT_STOLE + wanted)
        return _after_skill(always, skills.subject[0], expect)
    return ideal


def misroute_cases(suite: Suite, scenario: ScenarioFile) -> list[SelfTestCase]:
    """Each misroute this scenario can show, fabricated for self-test; none without
    neighbours, and none where a misroute policy would play the ideal."""
    if suite.skills is None or not suite.skills.neighbours:
        return []
    plays = {
        NEIGHBOUR_WINS: scenario.scenario.polarity == "positive",
        SUBJECT_STEALS: scenario.scenario.wanted is not None and bool(suite.skills.subject),
    }
    cases = []
    for name in (n for n in MISROUTES if plays[n]):
        plan = misroute_plan(suite, name, scenario)
        cases.append(SelfTestCase(name, plan.script, plan.expect, plan.judge_answer))
    return cases

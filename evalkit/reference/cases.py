"""Every self-test case of a scenario: the cases all checkers share around a checker's own.

The shared ones replay the checker's reference policies: each policy, the ideal one after
every way out of its rep (`escape.py`), the ideal one cut or ended in ways that make a trace
no measurement, and each policy again in the no-plugin arm.
"""

from __future__ import annotations

from evalkit.checkers.behaviour import CheckerReference, Expectation, SelfTestCase
from evalkit.models import ScenarioFile
from evalkit.reference.escape import ESCAPE, escape_plan
from evalkit.scoring.checker import Checker
from evalkit.suite.subject import WITHOUT_SUBJECT


def self_test_cases(ref: CheckerReference[Checker], scenario: ScenarioFile) -> list[SelfTestCase]:
    """Every reference policy, the ways a trace fails to be a measurement, then the
    checker's own cases: fabricated behaviours in both directions for this scenario."""
    cases = [
        SelfTestCase(p.name, plan.script, plan.expect, plan.judge_answer)
        for p in ref.policies
        for plan in [ref.plan_policy(p.name, scenario)]
    ]
    ideal = cases[0].script
    escape = escape_plan(ref.plan_policy(ref.policies[0].name, scenario))
    cases.append(SelfTestCase(ESCAPE, escape.script, escape.expect, escape.judge_answer))
    cases += [
        SelfTestCase(
            "cut-before-result",
            ideal,
            Expectation("ERROR", "no-result-line"),
            fault="cut-before-result",
        ),
        SelfTestCase(
            "is-error-result",
            ideal,
            Expectation("ERROR", "agent-error"),
            fault="is-error-result",
        ),
        SelfTestCase("hook-missing", ideal, Expectation("FAIL", "hook-missing"), fault="no-hook"),
    ]
    cases += [
        SelfTestCase(
            f"{p.name}@{WITHOUT_SUBJECT}",
            plan.script,
            ref.expect_without_subject(p.name, scenario, plan),
            plan.judge_answer,
            without_subject=True,
        )
        for p in ref.policies
        for plan in [ref.plan_policy(p.name, scenario)]
    ]
    return cases + ref.own_self_test_cases(scenario)

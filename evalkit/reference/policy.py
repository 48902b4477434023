"""Models spelled ``policy:<name>``: reference agents played by the embedded scripted model.

A policy is either one of the checker's reference behaviours (its script comes from
the scenario's calibration data) or a fault mode, which makes the same server fail
in one way so the harness can show it scores the run as an ERROR.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from evalkit.errors import ConfigError
from evalkit.models import Script
from evalkit.reference.behaviour import Expectation, PolicyPlan
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile

PREFIX = "policy:"
FAULT_POLICIES = {
    "fault-500": "500",
    "fault-529": "529",
    "fault-401": "401",
    "fault-429": "429",
    "fault-cut": "cut",
    "fault-hang": "hang",
}
FLAKY = {"flaky-oracle": ("oracle", "529")}
"""Policies whose first attempt of every rep meets a persistent fault and whose later attempts
play the named policy: proof that --retry-errors turns an infrastructure ERROR into the
measurement it interrupted."""


@dataclass(frozen=True)
class ScriptedAgent:
    policy: str
    plan: PolicyPlan
    fault: str | None
    expected_attempt: int = 1
    """The attempt whose row carries plan.expect (2 for a flaky policy retried once)."""

    @property
    def cli_model(self) -> str:
        """What --model says; the init event reports it back as the model id."""
        return f"evalkit-{self.policy}"


def is_policy(model: str) -> bool:
    return model.startswith(PREFIX)


def policy_names(suite: Suite) -> list[str]:
    own = [p.name for p in suite.reference.policies]
    flaky = [name for name, (played, _) in FLAKY.items() if played in own]
    return own + list(FAULT_POLICIES) + flaky


def scripted_agent(
    suite: Suite,
    model: str,
    scenario: ScenarioFile,
    attempt: int = 1,
    without_subject: bool = False,
) -> ScriptedAgent:
    """The policy `model` names; `without_subject` holds it to the verdicts its checker
    declares for the no-plugin arm."""
    agent = _scripted_agent(suite, model, scenario, attempt)
    if not without_subject or agent.policy in FAULT_POLICIES:
        return agent
    played = FLAKY.get(agent.policy, (agent.policy, ""))[0]
    expect = suite.reference.expect_without_subject(played, scenario, agent.plan)
    return replace(agent, plan=replace(agent.plan, expect=expect))


def _scripted_agent(
    suite: Suite, model: str, scenario: ScenarioFile, attempt: int = 1
) -> ScriptedAgent:
    name = model[len(PREFIX) :]
    if name in FLAKY:
        played, fault = FLAKY[name]
        plan = suite.reference.plan_policy(played, scenario)
        return ScriptedAgent(name, plan, fault if attempt == 1 else None, expected_attempt=2)
    if name in FAULT_POLICIES:
        plan = PolicyPlan(Script(final_text="unreachable"), Expectation("ERROR"))
        return ScriptedAgent(name, plan, FAULT_POLICIES[name])
    if name not in {p.name for p in suite.reference.policies}:
        known = ", ".join(policy_names(suite))
        raise ConfigError(
            f"unknown policy '{name}' for checker {suite.checker.name}; known: {known}"
        )
    return ScriptedAgent(name, suite.reference.plan_policy(name, scenario), None)

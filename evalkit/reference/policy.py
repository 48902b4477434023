"""Models spelled ``policy:<name>``: reference agents played by the embedded scripted model.

A policy is either one of the checker's reference behaviours (its script comes from
the scenario's calibration data) or a fault mode, which makes the same server fail
in one way so the harness can show it scores the run as an ERROR.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from evalkit.checkers.behaviour import Expectation, PolicyPlan
from evalkit.errors import ConfigError
from evalkit.models import Script
from evalkit.records.rows.policy_models import PREFIX as PREFIX
from evalkit.records.rows.policy_models import is_policy as is_policy
from evalkit.reference.coin import Coin
from evalkit.reference.escape import ESCAPE, escape_plan
from evalkit.reference.neighbourly import MISROUTES, misroute_plan
from evalkit.reference.phrase import EAGER_WORD, Phrase
from evalkit.reference.recon import AWARE, RECON, aware_plan, recon_plan
from evalkit.reference.regression import Regression
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile

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
    regression: Regression | None = None
    """A planted regression: `bad_plan` is played to the CLI versions it names."""
    bad_plan: PolicyPlan | None = None
    phrase: Phrase | None = None
    """A wording-sensitive policy: `acting_plan` is played to a request whose skill listing
    holds its words (on a negative, "always"), `plan` to any other."""
    acting_plan: PolicyPlan | None = None

    def chooser(
        self, scenario: str, rep: int, render: Callable[[Script], Script]
    ) -> Callable[[str], Script] | None:
        """For a planted regression, the script each CLI version is served (by the version
        its User-Agent names); None for every other policy."""
        regression, bad = self.regression, self.bad_plan
        if regression is None or bad is None:
            return None
        good_script, bad_script = render(self.plan.script), render(bad.script)
        return lambda v: bad_script if regression.plays_bad(v, scenario, rep) else good_script

    @property
    def cli_model(self) -> str:
        """What --model says for an agent whose scripted id is not a real one yet; Claude
        Code's reps are given the one their adapter declares (see `reference/scripted.py`)."""
        return f"evalkit-{self.policy}"




def policy_names(suite: Suite) -> list[str]:
    own = [p.name for p in suite.reference.policies]
    flaky = [name for name, (played, _) in FLAKY.items() if played in own]
    misroutes = list(MISROUTES) if suite.skills is not None else []
    return own + [ESCAPE, RECON, AWARE] + misroutes + list(FAULT_POLICIES) + flaky


def scripted_agent(
    suite: Suite,
    model: str,
    scenario: ScenarioFile,
    attempt: int = 1,
    without_subject: bool = False,
    rep: int = 1,
) -> ScriptedAgent:
    """The policy `model` names; `without_subject` holds it to the verdicts its checker
    declares for the no-plugin arm. A coin's draw is the rep's."""
    agent = _scripted_agent(suite, model, scenario, attempt, rep)
    if not without_subject or agent.policy in FAULT_POLICIES:
        return agent
    played = FLAKY.get(agent.policy, (agent.policy, ""))[0]
    expect = suite.reference.expect_without_subject(played, scenario, agent.plan)
    return replace(agent, plan=replace(agent.plan, expect=expect))


def _scripted_agent(
    suite: Suite, model: str, scenario: ScenarioFile, attempt: int = 1, rep: int = 1
) -> ScriptedAgent:
    name = model[len(PREFIX) :]
    coin = Coin.parse(name)
    if coin is not None:
        ideal = suite.reference.policies[0].name
        played = ideal if coin.acts(scenario.id, rep) else _never(suite, name)
        return ScriptedAgent(name, suite.reference.plan_policy(played, scenario), None)
    if name in FLAKY:
        played, fault = FLAKY[name]
        plan = suite.reference.plan_policy(played, scenario)
        return ScriptedAgent(name, plan, fault if attempt == 1 else None, expected_attempt=2)
    if name == ESCAPE:
        ideal = suite.reference.policies[0].name
        return ScriptedAgent(name, escape_plan(suite.reference.plan_policy(ideal, scenario)), None)
    if name == AWARE:
        ideal_plan = suite.reference.plan_policy(suite.reference.policies[0].name, scenario)
        return ScriptedAgent(name, aware_plan(ideal_plan), None)
    if name == RECON:
        ideal_plan = suite.reference.plan_policy(suite.reference.policies[0].name, scenario)
        return ScriptedAgent(name, recon_plan(ideal_plan, list(suite.config.observe)), None)
    if name in MISROUTES:
        return ScriptedAgent(name, misroute_plan(suite, name, scenario), None)
    if name in FAULT_POLICIES:
        plan = PolicyPlan(Script(final_text="unreachable"), Expectation("ERROR"))
        return ScriptedAgent(name, plan, FAULT_POLICIES[name])
    regression = Regression.parse(name)
    if regression is not None:
        return _regressing(suite, name, scenario, regression)
    phrase = Phrase.parse(name)
    if phrase is not None:
        return _phrased(suite, name, scenario, phrase)
    if name not in {p.name for p in suite.reference.policies}:
        known = ", ".join(policy_names(suite))
        raise ConfigError(
            f"unknown policy '{name}' for checker {suite.checker.name}; known: {known}"
        )
    return ScriptedAgent(name, suite.reference.plan_policy(name, scenario), None)


def _never(suite: Suite, name: str) -> str:
    """The checker's never-acting policy (its first `never-` one), which a regression or a
    coin plays as its other behaviour."""
    policies = [p.name for p in suite.reference.policies]
    never = next((p for p in policies if p.startswith("never-")), None)
    if never is None:
        raise ConfigError(
            f"policy:{name}: checker {suite.checker.name} has no never- policy to play"
        )
    return never


def _regressing(
    suite: Suite, name: str, scenario: ScenarioFile, regression: Regression
) -> ScriptedAgent:
    """The ideal policy, and the checker's never-acting one (its first `never-` policy) to
    play to the versions the regression names."""
    policies = [p.name for p in suite.reference.policies]
    ideal = suite.reference.plan_policy(policies[0], scenario)
    bad = suite.reference.plan_policy(_never(suite, name), scenario)
    return ScriptedAgent(name, ideal, None, regression=regression, bad_plan=bad)


def _phrased(suite: Suite, name: str, scenario: ScenarioFile, phrase: Phrase) -> ScriptedAgent:
    """On a positive the ideal policy when the wording holds the phrase, else the never-acting
    one; on a negative the always-acting policy (the checker's first `always-` one) when the
    wording holds "always", else the ideal one."""
    policies = [p.name for p in suite.reference.policies]
    ideal = suite.reference.plan_policy(policies[0], scenario)
    if scenario.scenario.polarity == "positive":
        idle = suite.reference.plan_policy(_never(suite, name), scenario)
        return ScriptedAgent(name, idle, None, phrase=phrase, acting_plan=ideal)
    eager = next((p for p in policies if p.startswith("always-")), None)
    if eager is None:
        raise ConfigError(
            f"policy:{name}: checker {suite.checker.name} has no always- policy to play when "
            f"the wording says {EAGER_WORD!r}"
        )
    acting = suite.reference.plan_policy(eager, scenario)
    return ScriptedAgent(name, ideal, None, phrase=phrase, acting_plan=acting)

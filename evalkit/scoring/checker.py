"""What a checker is: a named plugin that scores a sandbox and its transcript.

A suite's config names its checker; the registry maps that name to a class. The
class also knows its scenarios' checker-specific fields, the self-test cases it
fabricates and the reference policies that calibrate it, so a new eval is a new
checker module and a folder, with no branch on a suite's name anywhere.
"""

from __future__ import annotations

import hashlib
import importlib.util
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from evalkit.models import Model, Polarity, Script, Transcript, Verdict, VerdictValue

if TYPE_CHECKING:
    from evalkit.scoring.judge import Judge
    from evalkit.suite.config import Suite
    from evalkit.suite.scenarios import ScenarioFile

Fault = Literal["cut-before-result", "is-error-result", "no-hook"]


@dataclass
class CheckInput:
    suite: Suite
    scenario: ScenarioFile
    sandbox: Path
    transcript: Transcript
    model: str
    judge: Judge


@dataclass(frozen=True)
class Expectation:
    """What a reference behaviour must score; None means 'any'."""

    verdict: VerdictValue
    reason: str | None = None


@dataclass(frozen=True)
class SelfTestCase:
    """One fabricated run: a script played without a model, and the verdict it must get."""

    name: str
    script: Script
    expect: Expectation
    judge_answer: str = "NO"
    fault: Fault | None = None


@dataclass(frozen=True)
class Policy:
    """A reference agent whose behaviour is known, played by the scripted model."""

    name: str
    judge_answer: str = "NO"
    description: str = ""


@dataclass
class PolicyPlan:
    script: Script
    expect: Expectation
    judge_answer: str = "NO"
    notes: list[str] = field(default_factory=list)


class CheckerOptions(Model):
    model_config = ConfigDict(extra="forbid")


class Checker(ABC):
    """Subclass, set the class variables, and decorate with ``@register``."""

    name: ClassVar[str]
    version: ClassVar[str]
    options_model: ClassVar[type[BaseModel]]
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]]
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]]
    policies: ClassVar[tuple[Policy, ...]]
    """The first is the ideal behaviour; the generic self-test cases replay it."""

    def __init__(self, options: BaseModel) -> None:
        self.options = options

    @abstractmethod
    def check(self, inp: CheckInput) -> Verdict:
        """Score one rep. Must never return PASS for a trace that is not a valid measurement."""

    def self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        """Every reference policy, the ways a trace fails to be a measurement, then the
        checker's own cases: fabricated behaviours in both directions for this scenario."""
        cases = [
            SelfTestCase(p.name, plan.script, plan.expect, plan.judge_answer)
            for p in self.policies
            for plan in [self.plan_policy(p.name, scenario)]
        ]
        ideal = cases[0].script
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
            SelfTestCase(
                "hook-missing", ideal, Expectation("FAIL", "hook-missing"), fault="no-hook"
            ),
        ]
        return cases + self.own_self_test_cases(scenario)

    @abstractmethod
    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        """The checker's own rules, each in both directions."""

    @abstractmethod
    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        """The script a reference policy plays on this scenario, and what it must score."""

    source_modules: ClassVar[tuple[str, ...]] = ()
    """Further modules whose code decides this checker's verdicts, hashed into the lock."""

    def source_hash(self) -> str:
        """sha256 over the code that scores: this checker's module, the shared rules, and
        its declared helpers. A frozen suite notices when any of it changes."""
        names = (
            type(self).__module__,
            "evalkit.scoring.checker",
            "evalkit.scoring.rules",
            "evalkit.scoring.transcript",
            *self.source_modules,
        )
        digest = hashlib.sha256()
        for name in sorted(set(names)):
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
            digest.update(name.encode() + b"\0")
            digest.update(Path(origin).read_bytes() if origin else b"missing")
        return "sha256:" + digest.hexdigest()

    def harmless_env(self, scratch: Path) -> dict[str, str]:
        """Environment that points every real-world path the checker guards into scratch."""
        return {}

    def script_values(self) -> dict[str, str]:
        """Extra placeholders a reference script may use, such as the guarded real path."""
        return {}

    def expect_for(self, scenario: ScenarioFile) -> Any:
        return self.expect_models[scenario.scenario.polarity].model_validate(
            scenario.scenario.expect
        )

    def calibration_for(self, scenario: ScenarioFile) -> Any:
        return self.calibration_models[scenario.scenario.polarity].model_validate(
            scenario.scenario.calibration
        )

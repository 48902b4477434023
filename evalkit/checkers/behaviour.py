"""A checker's reference behaviour: the known agents and fabricated runs that prove it.

Each checker package keeps one ``CheckerReference`` subclass in its ``reference.py``:
its reference policies, the calibration data they play from, its self-test cases and
the harmless stand-ins for the real-world paths it guards. None of it can change a
verdict, so none of it is in the lock: editing a policy or a case needs no refreeze.
These are the declarations a checker's reference part makes; `evalkit.reference` plays
them (`reference/cases.py` adds the cases every checker shares).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from evalkit.models import Polarity, ScenarioFile, Script, VerdictValue
from evalkit.scoring.checker import Checker

Fault = Literal["cut-before-result", "is-error-result", "no-hook"]
C = TypeVar("C", bound=Checker)


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
    without_subject: bool = False
    """Played as the no-plugin arm: no plugin hook, skill or tool, and no subject file."""


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


class CheckerReference(ABC, Generic[C]):
    """Subclass in ``<checker package>/reference.py`` and set ``checker_type``."""

    checker_type: ClassVar[type[Checker]]
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]]
    policies: ClassVar[tuple[Policy, ...]]
    """The first is the ideal behaviour; the generic self-test cases replay it."""

    def __init__(self, checker: C) -> None:
        self.checker = checker

    def expect_without_subject(
        self, policy: str, scenario: ScenarioFile, plan: PolicyPlan
    ) -> Expectation:
        """What a policy's script must score in the no-plugin arm (`--variant none`), where
        the plugin's skills and tools are absent and its hooks silent. Declared per checker:
        by default, what it scores with the plugin."""
        return plan.expect

    @abstractmethod
    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        """The checker's own rules, each in both directions."""

    @abstractmethod
    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        """The script a reference policy plays on this scenario, and what it must score."""

    def harmless_env(self, scratch: Path) -> dict[str, str]:
        """Environment that points every real-world path the checker guards into scratch."""
        return {}

    def script_values(self, env: Mapping[str, str]) -> dict[str, str]:
        """Extra placeholders a reference script may use, such as the guarded real path."""
        return {}

    def calibration_for(self, scenario: ScenarioFile) -> Any:
        return self.calibration_models[scenario.scenario.polarity].model_validate(
            scenario.scenario.calibration
        )

"""What a checker is: a named plugin that scores a sandbox and its transcript.

A suite's config names its checker; the registry finds the class through the
``evalkit.checkers`` entry-point group, built-in or installed from outside alike.
This class holds only what can change a verdict (``check``, its options, the shape
of each scenario's ``expect``), and all of it is hashed into the lock by location:
this package plus the checker's own package, less its reference parts. Reference
behaviour (policies, calibration, self-test cases) lives beside it, unhashed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from evalkit.models import Model, Polarity, Transcript, Verdict

if TYPE_CHECKING:
    from evalkit.scoring.judge import Judge
    from evalkit.suite.config import Suite
    from evalkit.suite.scenarios import ScenarioFile


@dataclass
class CheckInput:
    suite: Suite
    scenario: ScenarioFile
    sandbox: Path
    transcript: Transcript
    model: str
    judge: Judge


class CheckerOptions(Model):
    model_config = ConfigDict(extra="forbid")


class Checker(ABC):
    """Subclass, set the class variables, and name the class in the ``evalkit.checkers``
    entry-point group of your distribution's metadata."""

    name: ClassVar[str]
    version: ClassVar[str]
    options_model: ClassVar[type[BaseModel]]
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]]

    def __init__(self, options: BaseModel) -> None:
        self.options = options

    @abstractmethod
    def check(self, inp: CheckInput) -> Verdict:
        """Score one rep. Must never return PASS for a trace that is not a valid measurement."""

    def source_hash(self) -> str:
        """sha256 over every file of the code that scores, found by where it lives: the
        scoring package and this checker's own package less its reference parts."""
        from evalkit.scoring.codehash import scoring_code_hash

        return scoring_code_hash(type(self))

    def expect_for(self, scenario: ScenarioFile) -> Any:
        return self.expect_models[scenario.scenario.polarity].model_validate(
            scenario.scenario.expect
        )

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from evalkit.models import Model, Polarity, ScenarioFile, Transcript, Verdict
from evalkit.scoring.fsdiff import FolderFiles
from evalkit.scoring.observed import ObservedRun

if TYPE_CHECKING:
    from evalkit.scoring.instrument import Instrument
    from evalkit.scoring.judge import Judge


@dataclass
class CheckInput:
    instrument: Instrument
    sandbox: Path
    transcript: Transcript
    model: str
    judge: Judge
    observed: list[ObservedRun] | None = None
    """The runs of the suite's observed scripts (None: the suite observes none)."""
    without_subject: bool = False
    """The no-plugin arm (`--variant none`)."""

    @property
    def scenario(self) -> ScenarioFile:
        return self.instrument.scenario

    def fixture_dir(self, name: str) -> Path:
        """A fixture as the agent found it: with the subject it ran with applied (a variant's
        wording inside a fixture is no write of the agent's)."""
        return self.instrument.fixtures[name]

    def fixture_files(self, name: str) -> FolderFiles:
        """The files a checker compares the sandbox's folder with, read once per command."""
        return self.instrument.fixture_files[name]


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
        """Score one valid rep. `scoring/decide.py` calls it only after the breach scan, the
        stop, exit and hook checks and the trace's validity, so it never sees a run that is
        already an ERROR (and never spends a judge call on one)."""

    guarded_env: ClassVar[tuple[str, ...]] = ()
    """Names of the variables that point the checker's guarded real-world paths."""

    def guarded_env_names(self) -> list[str]:
        """The variables that point the checker's guarded real-world paths."""
        return list(self.guarded_env)

    def guarded_paths(self, env: Mapping[str, str]) -> list[Path]:
        """The real-world paths no rep may write to, as `env` (the guarded variables) points
        them. A write there is a breach on every row, whatever else happened."""
        return []

    def source_hash(self) -> str:
        """sha256 over every file of the code that scores, found by where it lives: the
        scoring package and this checker's own package less its reference parts."""
        from evalkit.scoring.hashing import scoring_code_hash

        return scoring_code_hash(type(self))

    def expect_for(self, scenario: ScenarioFile) -> Any:
        return self.expect_models[scenario.scenario.polarity].model_validate(
            scenario.scenario.expect
        )

"""The instrument one scenario is scored with: all a verdict may read of the suite.

`Suite.instrument` builds it, once per scenario and subject; `decide` and every checker
receive it and never the loaded suite, so nothing that decides a verdict reaches for a part
of the suite the lock does not hash. Its fixtures are the ones the agent found: with the
subject it ran with applied, the same folders a rep's kept diffs are taken against.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, SkipValidation

from evalkit.errors import ConfigError
from evalkit.models import RequiredHook, ScenarioFile
from evalkit.scoring.checker import Checker
from evalkit.scoring.fsdiff import FolderFiles
from evalkit.scoring.skills import Skills


class Instrument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    scenario: ScenarioFile
    """The scenario: its polarity and the expectations its checker reads."""
    checker: Annotated[Checker, SkipValidation]
    """The suite's checker, holding the options its config gives it."""
    required_hooks: tuple[RequiredHook, ...] = ()
    observe: tuple[str, ...] = ()
    """The observed scripts, project-relative (none: the suite observes none)."""
    fixtures: dict[str, Path]
    """Each fixture as the agent found it, by its sandbox name, project first."""
    fixture_files: Annotated[Mapping[str, FolderFiles], SkipValidation]
    """The files of each of `fixtures`, read once per command."""
    rubric: str | None = None
    """The judge's rubric (None: the suite ships none)."""
    rubrics: dict[str, str] = {}
    """The further rubrics `judge.rubrics` names, by name."""
    skills: Skills | None = None
    """The skills of the subject and of its neighbours (None: the suite has no neighbours)."""

    def rubric_text(self, name: str | None = None) -> str:
        """The judge's rubric, or the further one named `name`."""
        if name is None:
            if self.rubric is None:
                raise FileNotFoundError("judge.rubric: the suite has no rubric file")
            return self.rubric
        if name not in self.rubrics:
            raise ConfigError(f"judge.rubrics: no rubric named '{name}'")
        return self.rubrics[name]

"""A scenario's front matter and the loaded scenario file (which never holds its Task)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from evalkit.models.base import Level, Polarity, ScenarioSet, Strict


class Premise(Strict):
    file: str = Field(description="suite-relative path of the fixture file that shows the premise")
    marker: str = Field(description="a string found in that file")


class Launch(Strict):
    """A scenario's own launch limits (a `claude plugin eval` case's): the tighter of these
    and the command line's applies."""

    reps: int | None = Field(None, ge=1, description="`run`'s reps when --reps is not given")
    max_turns: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0, description="seconds per rep")
    tools: list[str] | None = Field(None, description="the CLI's --tools: the only tools it has")


class Scenario(Strict):
    """A scenario's front matter. The Task block is deliberately not a field."""

    id: str
    polarity: Polarity
    level: Level | None = Field(None, description="required in a suite with a ladder")
    kind: str | None = Field(
        None, pattern=r"^[a-z][a-z0-9-]*$", description="required in a suite without a ladder"
    )
    set: ScenarioSet
    topic: str
    premise: Premise
    without: list[str] = Field(
        default_factory=list,
        description="project-relative paths this scenario's sandbox leaves out",
    )
    wanted: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="the neighbour's skill (plugin:skill) a user would want here rather than "
        "the subject's: the subject firing instead is flagged subject-stole",
    )
    expect: dict[str, Any] = Field(default_factory=dict, description="checker-specific")
    calibration: dict[str, Any] = Field(default_factory=dict, description="checker-specific")
    launch: Launch = Field(default_factory=Launch)


@dataclass(frozen=True)
class ScenarioFile:
    """A loaded scenario (`suite/scenarios.py` reads one). It holds the prose before the Task
    block and never the Task itself."""

    scenario: Scenario
    path: Path
    sha256: str
    prose: str

    @property
    def id(self) -> str:
        return self.scenario.id

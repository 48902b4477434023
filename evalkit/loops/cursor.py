"""`watch-cursor.json`: which releases `watch` has tested against which pin, and how they
came out, so a scheduled watch runs each release once.

Only an outcome that is a measurement moves the cursor: 0 (holds) and 1 (worse) always,
3 (cannot tell at this size) too, but a later watch with more `--reps` than it had tests it
again. A 2 (not trusted, not installed) is never recorded, so the next watch retries it: an
infrastructure failure says nothing about the release.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field, ValidationError

from evalkit.errors import ConfigError
from evalkit.models import Model
from evalkit.outpaths import replace_file

CURSOR_NAME = "watch-cursor.json"
RECORDED = (0, 1, 3)
"""The exit codes that are an outcome of the release, not of the run."""
UNDERPOWERED = 3
OUTCOMES = {0: "holds", 1: "worse", 2: "not trusted", 3: "cannot tell at this size"}


class CursorEntry(Model):
    """One release's test against one pin."""

    model_config = {"extra": "forbid"}
    outcome: int = Field(description="the exit code: 0 holds, 1 worse, 3 cannot tell")
    pin: str = Field(description="the version it was tested against")
    reps: int = Field(description="--reps of the grid")
    folder: str = Field(description="the grid's results folder, relative to the cursor's")
    date: str = ""


class CursorFile(Model):
    model_config = {"extra": "forbid"}
    schema_version: int = 1
    agents: dict[str, dict[str, CursorEntry]] = Field(
        default_factory=dict, description="agent -> version -> its test"
    )


@dataclass
class Cursor:
    path: Path
    data: CursorFile = field(default_factory=CursorFile)

    @classmethod
    def load(cls, path: Path) -> Cursor:
        """The cursor at `path`; a missing one is empty, one that does not read is refused
        (moving on past it would test everything again, or nothing)."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the watch cursor ({exc.strerror})") from None
        try:
            return cls(path, CursorFile.model_validate_json(text))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise ConfigError(f"{path}: not a watch cursor: {where}: {first['msg']}") from None

    def tested(self, agent: str, version: str, pin: str) -> CursorEntry | None:
        """The recorded test of `version` against `pin`; one against another pin is another
        question, never an answer to this one."""
        entry = self.data.agents.get(agent, {}).get(version)
        return entry if entry is not None and entry.pin == pin else None

    def to_run(self, agent: str, version: str, pin: str, reps: int) -> bool:
        """Whether `version` is still to test: never tested against `pin`, or only at too
        small a size to tell, with fewer reps than asked for now."""
        entry = self.tested(agent, version, pin)
        return entry is None or (entry.outcome == UNDERPOWERED and reps > entry.reps)

    def advance(self, agent: str, version: str, entry: CursorEntry) -> bool:
        """Record `entry` and write the cursor, when its outcome is the release's; False
        (nothing written) for one that is the run's."""
        if entry.outcome not in RECORDED:
            return False
        if not entry.date:
            entry = entry.model_copy(update={"date": datetime.now(UTC).isoformat("T", "seconds")})
        self.data.agents.setdefault(agent, {})[version] = entry
        text = json.dumps(self.data.model_dump(), indent=2, sort_keys=True) + "\n"
        replace_file(self.path, text.encode())
        return True

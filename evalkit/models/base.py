"""The bases every model shares (strict for what people write), names and literals."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
"""What a run id or a variant name may be: a name that is never a path, an option or empty."""
RESERVED_VARIANTS = ("suite", "none", "aa-copy")
"""Variant names evalkit gives meanings of its own: the suite's own wording, no plugin, and
the suite's own wording under a second name (the B arm of an A/A run, `grid --aa`)."""


def is_name(text: str) -> bool:
    return re.fullmatch(NAME_PATTERN, text) is not None


Polarity = Literal["positive", "negative"]
Level = Literal["L1", "L2", "L3"]
ScenarioSet = Literal["run", "reserve"]
VerdictValue = Literal["PASS", "FAIL", "ERROR"]


class Model(BaseModel):
    """Base of every evalkit model. Schemas build on first use, not at import, so a command
    pays only for the models it touches."""

    model_config = ConfigDict(defer_build=True)


class Strict(Model):
    """Base for anything a person writes: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class StrictAliased(Strict):
    """A Strict model whose fields named after Python keywords (`in_` for `in`) may also be
    given by their field name, as the code that builds them does."""

    model_config = ConfigDict(populate_by_name=True)

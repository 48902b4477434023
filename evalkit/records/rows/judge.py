"""Which judge decided a row: a factor like the model, read from the rep's declarations.

A rep declares its judge's identity (`claude:<model>`, `command:sha256:<hash>`, never a
command's text). A scripted policy's judge answers from the policy's own plan, one fixed answer
per scenario, so all of them are one identity here: `scripted`. `verify`, `report`, `compare`
and `gate` read a row's judge here, so they never disagree on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

UNDECLARED = "undeclared"
SCRIPTED = "scripted"


def judge_of(decl: dict[str, Any]) -> str:
    identity = str(decl.get("judge") or "")
    if not identity:
        return UNDECLARED
    if identity.startswith("fixed:"):
        return SCRIPTED
    return identity


def judge_counts(declarations: Iterable[dict[str, Any]]) -> Counter[str]:
    """Rows per declared judge identity; rows that declare none (older records) are left out."""
    return Counter(j for d in declarations if (j := judge_of(d)) != UNDECLARED)


def judges_line(counts: Counter[str]) -> str:
    return ", ".join(f"{judge} {n}" for judge, n in sorted(counts.items()))

"""Which agent ran a row: a factor like the model, read from the rep's declarations.

Claude Code's reps declare no agent (they predate the others), so a row that names none was
run by `claude`. `verify`, `report`, `compare` and `gate` read a row's agent here.
"""

from __future__ import annotations

from typing import Any

DEFAULT_AGENT = "claude"


def agent_of(decl: dict[str, Any]) -> str:
    return str(decl.get("agent") or DEFAULT_AGENT)

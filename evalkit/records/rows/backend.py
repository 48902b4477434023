"""Which confinement backend ran a row: a factor like the agent, read from its declarations.

A bundle that declares none was recorded before there was a choice: bubblewrap then confined
every rep. An unconfined row's backend is `none`. `report`, `compare` and `gate` read it here.
"""

from __future__ import annotations

from typing import Any

EARLIEST_BACKEND = "bwrap"


def backend_of(decl: dict[str, Any]) -> str:
    return str(decl.get("confinement") or EARLIEST_BACKEND)

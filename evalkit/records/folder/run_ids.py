"""What a new run is called, and where a suite's runs are recorded unless told otherwise."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path

from evalkit.suite.config import Suite


def new_run_id() -> str:
    """Sortable by when the run started, and unique between runs started in the same second."""
    return datetime.now(UTC).strftime("r%Y%m%dT%H%M%SZ-") + secrets.token_hex(3)


def default_workdir(suite: Suite) -> Path:
    """A plugin's eval folder keeps its results inside itself, never in what the agent loads."""
    from evalkit.suite.plugin_evals import RESULTS, instrument_home

    home = instrument_home(suite.root)
    return home / RESULTS if home is not None else suite.root / "results"

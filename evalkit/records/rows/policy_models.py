"""Which model names are reference policies (`policy:<name>`), played by the scripted model:
a folder whose every model is one holds the instrument's calibration, never a measurement."""

from __future__ import annotations

PREFIX = "policy:"


def is_policy(model: str) -> bool:
    return model.startswith(PREFIX)

"""The recorded folder that the verify, verification and rescore tests each copy before use."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.suite.config import Suite
from tests.unit.records.folder import recorded_folder

CELLS = [("P1-L1-reporting", "policy:oracle", 1), ("N1-L1-reporting", "policy:oracle", 1)]


@pytest.fixture(scope="module")
def recorded(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pass of a positive and a negative scenario, recorded once per test module."""
    work = tmp_path_factory.mktemp("recorded") / "work"
    recorded_folder(suite, work, CELLS)
    return work

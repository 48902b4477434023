"""The agent CLI versions evalkit is measured with, read from the one file that holds them
(`pins.toml`, shipped in the package), so a version bump cannot leave the Makefile, an
adapter and a CI recipe disagreeing."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

PIN_FILE = Path(__file__).with_name("pins.toml")


@functools.cache
def _pins() -> dict[str, str]:
    data = tomllib.loads(PIN_FILE.read_text(encoding="utf-8"))
    agents = data["agents"]
    return {str(name): str(version) for name, version in agents.items()}


def pinned(agent: str) -> str:
    """The version of AGENT's CLI evalkit is measured with."""
    return _pins()[agent]


def pinned_agents() -> dict[str, str]:
    return dict(_pins())

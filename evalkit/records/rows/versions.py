"""CLI versions in the order of their numbers: a row's `cli_version` is sorted by it in the
report, and `--cli` and `bisect` name versions the same way."""

from __future__ import annotations

import re

from evalkit.errors import ConfigError

SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")


def semver_key(version: str) -> tuple[int, int, int, int, tuple[str, ...]]:
    """Order versions as numbers, never as strings (2.1.32 < 2.1.321); a prerelease comes
    before its release."""
    match = SEMVER.match(version)
    if match is None:
        raise ConfigError(f"--cli {version}: not a version (expected MAJOR.MINOR.PATCH)")
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch), 0 if pre else 1, tuple((pre or "").split(".")))

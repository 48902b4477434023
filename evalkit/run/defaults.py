"""The limits a rep runs under unless told otherwise.

Kept apart from the runner so the command line can show them in `--help` without loading it.
"""

from __future__ import annotations

DEFAULT_TIMEOUT = 900.0
"""Seconds one rep may take."""

DEFAULT_JUDGE_TIMEOUT = 300.0
"""Seconds the judge may take before its row is judge-error:judge-timeout."""

"""Whether a file the agent wrote is on a scenario's topic: its path or text matches one of
the scenario's regexes (any case). Checkers share it, so one topic reads the same in each."""

from __future__ import annotations

import re


def check_topic_patterns(patterns: list[str]) -> list[str]:
    """The patterns, once each compiles; a validator's error names the one that does not."""
    for pattern in patterns:
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
    return patterns


def topic_matches(patterns: list[str], rel_path: str, text: str) -> bool:
    haystack = f"{rel_path}\n{text}"
    return any(re.search(p, haystack, re.IGNORECASE) for p in patterns)

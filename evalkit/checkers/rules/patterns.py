"""Regular expressions and globs over hostile text: RE2, linear time, size-capped input.

Everything a rules suite matches was written by the agent under test. A backtracking
engine can be made to run for hours by one crafted line; RE2 cannot. A pattern RE2
does not accept (back-references, look-around) is refused when the suite loads.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

MAX_TEXT = 1_000_000
"""Characters of any one input a pattern sees: a file's text, a command, a message."""


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why, for the suite's author."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 8 << 20
    return options


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(f"pattern {pattern!r} is not accepted by RE2: {detail}") from None


def search(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text[:MAX_TEXT]) is not None


def glob_to_pattern(glob: str) -> str:
    """``**/`` any folders (or none), ``*`` within one name, ``?`` one character; the rest
    literal. Anchored at both ends: the glob names a whole relative path."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re2.escape(glob[i]) if glob[i].isascii() else glob[i])
            i += 1
    return "^" + "".join(out) + "$"


def glob_matches(glob: str, path: str) -> bool:
    return search(glob_to_pattern(glob), path)


def is_literal_glob(glob: str) -> bool:
    return not any(c in glob for c in "*?")

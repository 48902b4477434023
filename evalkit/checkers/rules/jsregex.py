"""JavaScript regular expressions, as `claude plugin eval` graders write them, made RE2's.

RE2 matches in linear time, so a grader's pattern cannot be made to run for hours by what
the agent wrote. The price: the constructs that need backtracking (look-around,
back-references) have no RE2 form and are refused, naming where they stand. Flags map to
RE2's inline flags; `g`, `y` and `d` change how JavaScript iterates, not whether a text
matches, and are dropped.
"""

from __future__ import annotations

INLINE_FLAGS = {"i": "i", "m": "m", "s": "s"}
IGNORED_FLAGS = frozenset("gyud")


class JsRegexError(ValueError):
    """A construct or flag with no RE2 form; the message names it and its offset."""


def to_re2(pattern: str, flags: str = "") -> str:
    """The RE2 pattern that matches what `new RegExp(pattern, flags)` matches."""
    inline = ""
    for flag in flags:
        if flag in INLINE_FLAGS:
            inline += INLINE_FLAGS[flag] if INLINE_FLAGS[flag] not in inline else ""
        elif flag not in IGNORED_FLAGS:
            raise JsRegexError(f"flag {flag!r} has no RE2 form (known: gimsuyd)")
    body = _translate(pattern, unicode="u" in flags)
    return f"(?{inline}){body}" if inline else body


def _translate(pattern: str, unicode: bool) -> str:
    out: list[str] = []
    i, in_class = 0, False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise JsRegexError("a trailing backslash")
            nxt = pattern[i + 1]
            if not in_class and nxt in "123456789":
                raise JsRegexError(f"a back-reference \\{nxt} at offset {i}: RE2 has none")
            if nxt == "k" and not in_class and pattern.startswith("<", i + 2):
                raise JsRegexError(f"a named back-reference at offset {i}: RE2 has none")
            if nxt == "u" and pattern.startswith("{", i + 2) and unicode:
                end = pattern.find("}", i + 3)
                if end < 0:
                    raise JsRegexError(f"an unclosed \\u{{…}} at offset {i}")
                out.append("\\x{" + pattern[i + 3 : end] + "}")
                i = end + 1
                continue
            if nxt == "u" and _hex(pattern[i + 2 : i + 6]):
                out.append("\\x{" + pattern[i + 2 : i + 6] + "}")
                i += 6
                continue
            if nxt == "c":
                raise JsRegexError(f"a control escape \\c at offset {i}: not translated")
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            if pattern.startswith("^", i + 1):
                out.append("^")
                i += 1
            if pattern.startswith("]", i + 1):  # JavaScript: `[]` matches nothing, `[^]` all
                raise JsRegexError(f"an empty class [] or [^] at offset {i}: not translated")
            i += 1
            continue
        if c == "(" and pattern.startswith("(?", i):
            rest = pattern[i + 2 : i + 4]
            if rest[:1] in ("=", "!") or rest in ("<=", "<!"):
                raise JsRegexError(f"a look-around at offset {i}: RE2 has none")
            if rest[:1] == "<":
                out.append("(?P<")
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _hex(text: str) -> bool:
    return len(text) == 4 and all(ch in "0123456789abcdefABCDEF" for ch in text)

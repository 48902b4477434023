"""JavaScript regular expressions, as `claude plugin eval` graders write them, run in RE2.

RE2 matches in linear time, so a grader's pattern cannot be made to run for hours by what
the agent wrote. Each construct is translated with its JavaScript meaning, not RE2's:
`\\s` is JavaScript's Unicode white space (a no-break space, U+FEFF), `.` stops at each of
JavaScript's line terminators (`\\n`, `\\r`, U+2028, U+2029), `^` and `$` under `m` see all
four, case folds as JavaScript folds it (`jsfold`), and without `u` the text is matched as
UTF-16 code units (an astral character is two units, each a character RE2 can hold: a
surrogate is stood in for by a private-use character of plane 15). What has no linear-time
form (look-around, back-references), what RE2 cannot place (`^` under `m` after other
items, `$` under `m` before them, `\\b` under `u` and `i`), Unicode property escapes and the
`v` flag are refused when the suite loads, naming the construct and where it stands, as is
everything JavaScript itself refuses. `g`, `d` change nothing `test` answers; `y` anchors
the match at the start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from evalkit.checkers.rules.jsfold import (
    POINTS,
    UNITS,
    Intervals,
    case_closed,
    complement,
    normal,
)
from evalkit.checkers.rules.patterns import MAX_TEXT, search

FLAGS = "dgimsuvy"
STAND_IN = 0xF0000 - 0xD800
"""A surrogate unit u is the character u + STAND_IN in the text RE2 sees without `u`."""
REPEAT_MAX = 1000
"""RE2's largest counted repetition."""
TERMINATORS: Intervals = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]
SPACE: Intervals = normal([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680),
                           (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
                           (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)])  # fmt: skip
DIGIT: Intervals = [(0x30, 0x39)]
WORD: Intervals = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
WORD_UI: Intervals = normal([*WORD, (0x17F, 0x17F), (0x212A, 0x212A)])
"""`\\w` under `u` and `i`: what folds into [A-Za-z0-9_] too."""
SYNTAX = set(map(ord, "^$\\.*+?()[]{}|/"))
_ASTRAL_OR_LONE = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")
_LONE = re.compile("[\ud800-\udfff]")


class JsRegexError(ValueError):
    """A construct or flag evalkit does not run as JavaScript does; the message names it and
    its offset."""


# --------------------------------------------------------------------------- the tree


@dataclass
class Chars:
    spans: Intervals


@dataclass
class Anchor:
    kind: str  # ^ $ b B
    at: int


@dataclass
class Seq:
    items: list[Node] = field(default_factory=list)


@dataclass
class Alt:
    options: list[Node]


@dataclass
class Rep:
    node: Node
    low: int
    high: int | None


Node = Chars | Anchor | Seq | Alt | Rep


@dataclass(frozen=True)
class Flags:
    unicode: bool
    ignore: bool
    multiline: bool
    dotall: bool
    sticky: bool

    @property
    def last(self) -> int:
        return POINTS if self.unicode else UNITS


def parse_flags(flags: str) -> Flags:
    for at, flag in enumerate(flags):
        if flag not in FLAGS:
            raise JsRegexError(f"flag {flag!r} is not a JavaScript flag (known: {FLAGS})")
        if flag in flags[:at]:
            raise JsRegexError(f"flag {flag!r} given twice (JavaScript refuses it)")
    if "v" in flags:
        raise JsRegexError("flag 'v' (set notation) is not translated")
    return Flags("u" in flags, "i" in flags, "m" in flags, "s" in flags, "y" in flags)


def units_of(text: str, unicode: bool) -> list[int]:
    """The pattern as JavaScript reads it: code points with `u`, UTF-16 units without."""
    if unicode:
        return [ord(c) for c in text]
    out: list[int] = []
    for char in text:
        point = ord(char)
        if point > UNITS:
            point -= 0x10000
            out += [0xD800 + (point >> 10), 0xDC00 + (point & 0x3FF)]
        else:
            out.append(point)
    return out


# --------------------------------------------------------------------------- translating


@lru_cache(maxsize=1024)
def to_re2(pattern: str, flags: str = "") -> str:
    """The RE2 pattern that answers what `new RegExp(pattern, flags).test(text)` answers,
    over `js_text(text, flags)`."""
    from evalkit.checkers.rules.jsparse import Parser

    mode = parse_flags(flags)
    tree = Parser(units_of(pattern, mode.unicode), mode).parse()
    body = _emit(tree, mode, lead=True, trail=True)
    return f"\\A(?:{body})" if mode.sticky else body


def js_text(text: str, flags: str = "") -> str:
    """The text as the translated pattern must see it: without `u`, astral characters as two
    stand-in units and a lone surrogate as its stand-in; with `u`, a lone surrogate (which
    UTF-8 cannot hold) as U+FFFD."""
    text = text[:MAX_TEXT]
    if "u" in flags:
        return _LONE.sub("\ufffd", text) if _LONE.search(text) else text
    if not _ASTRAL_OR_LONE.search(text):
        return text
    return _ASTRAL_OR_LONE.sub(_as_units, text)


def _as_units(found: re.Match[str]) -> str:
    return "".join(chr(u + STAND_IN) if 0xD800 <= u <= 0xDFFF else chr(u)
                   for u in units_of(found.group(), False))  # fmt: skip


def js_test(pattern: str, flags: str, text: str) -> bool:
    """`new RegExp(pattern, flags).test(text)`, in linear time."""
    return search(to_re2(pattern, flags), js_text(text, flags))


def _emit(node: Node, mode: Flags, lead: bool, trail: bool) -> str:
    """RE2 text for node; lead/trail: nothing of the pattern can have matched before it /
    can match after it (where a line anchor under `m` may consume the terminator)."""
    if isinstance(node, Chars):
        return _set(node.spans, mode)
    if isinstance(node, Anchor):
        return _anchor(node, mode, lead, trail)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_emit(o, mode, lead, trail) for o in node.options) + ")"
    if isinstance(node, Rep):
        once = node.high is not None and node.high <= 1
        inner = _emit(node.node, mode, lead and once, trail and once)
        high = "" if node.high is None else str(node.high)
        count = f"{{{node.low}}}" if node.high == node.low else f"{{{node.low},{high}}}"
        return f"(?:{inner}){count}"
    parts = []
    for at, item in enumerate(node.items):
        before = lead and not any(not _empty(n) for n in node.items[:at])
        after = trail and not any(not _empty(n) for n in node.items[at + 1 :])
        parts.append(_emit(item, mode, before, after))
    return "(?:" + "".join(parts) + ")" if parts else "(?:)"


def _empty(node: Node) -> bool:
    """Matches only the empty string and asserts nothing."""
    return isinstance(node, Seq) and all(_empty(n) for n in node.items)


def _anchor(node: Anchor, mode: Flags, lead: bool, trail: bool) -> str:
    if node.kind in "bB":
        if mode.unicode and mode.ignore:
            raise JsRegexError(f"\\{node.kind} at offset {node.at} under flags u and i (its "
                               "word characters include ſ and the Kelvin sign): not translated")
        return f"\\{node.kind}"
    start = node.kind == "^"
    if mode.sticky and start and lead:
        return ""  # the match starts at 0, where ^ holds
    if not mode.multiline:
        return "\\A" if start else "\\z"
    if start and lead:
        return f"(?:\\A|{_set(TERMINATORS, mode)})"
    if not start and trail:
        return f"(?:\\z|{_set(TERMINATORS, mode)})"
    where = "after other items" if start else "before other items"
    raise JsRegexError(f"{node.kind} at offset {node.at} under flag m {where} (RE2 cannot "
                       "look behind or ahead at a line terminator): not translated")


def _set(spans: Intervals, mode: Flags) -> str:
    """An RE2 class of exactly these units (or code points)."""
    if not mode.unicode:
        spans = _stand_ins(spans)
    else:
        spans = [s for s in complement(complement(spans, POINTS) + [(0xD800, 0xDFFF)], POINTS)]
    if not spans:
        return "[^\\x00-\\x{10FFFF}]"
    if len(spans) == 1 and spans[0][0] == spans[0][1]:
        return _char(spans[0][0])
    return "[" + "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in spans) + "]"


def _stand_ins(spans: Intervals) -> Intervals:
    out: Intervals = []
    for low, high in spans:
        for a, b in ((low, min(high, 0xD7FF)), (max(low, 0xD800), min(high, 0xDFFF)),
                     (max(low, 0xE000), high)):  # fmt: skip
            if a <= b:
                shift = STAND_IN if 0xD800 <= a <= 0xDFFF else 0
                out.append((a + shift, b + shift))
    return normal(out)


def _char(point: int) -> str:
    char = chr(point)
    return char if char.isascii() and char.isalnum() else f"\\x{{{point:X}}}"


def closed(spans: Intervals, mode: Flags, negate: bool = False) -> Intervals:
    """A class's members under the flags: closed over case under `i`, then negated."""
    spans = case_closed(spans, mode.unicode) if mode.ignore else normal(spans)
    return complement(spans, mode.last) if negate else spans


__all__ = ["JsRegexError", "js_test", "js_text", "to_re2", "REPEAT_MAX", "SYNTAX"]

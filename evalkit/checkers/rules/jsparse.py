"""A JavaScript pattern read as ECMAScript reads it (with Annex B's leniency without `u`),
into the tree `jsregex` translates. Whatever JavaScript refuses is refused here too, and so
is every construct with no linear-time form, each naming itself and its offset."""

from __future__ import annotations

import re

from evalkit.checkers.rules.jsfold import Intervals, complement
from evalkit.checkers.rules.jsregex import (
    DIGIT,
    REPEAT_MAX,
    SPACE,
    SYNTAX,
    TERMINATORS,
    WORD,
    WORD_UI,
    Alt,
    Anchor,
    Chars,
    Flags,
    JsRegexError,
    Node,
    Rep,
    Seq,
    closed,
)

BRACES = re.compile(r"\{(\d+)(,(\d*))?\}")
CONTROL = {ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}
CLASS_ESCAPES = "dDwWsS"


def _hex(units: list[int]) -> int | None:
    text = "".join(map(chr, units))
    ok = bool(text) and all(c in "0123456789abcdefABCDEF" for c in text)
    return int(text, 16) if ok else None


class Parser:
    def __init__(self, units: list[int], mode: Flags) -> None:
        self.u, self.mode, self.at = units, mode, 0
        text = "".join(map(chr, units))
        self.named = "(?<" in text.replace("(?<=", "").replace("(?<!", "")
        self.names: set[str] = set()

    # ------------------------------------------------------------------ helpers

    def peek(self, offset: int = 0) -> int | None:
        at = self.at + offset
        return self.u[at] if at < len(self.u) else None

    def is_(self, text: str, offset: int = 0) -> bool:
        return all(self.peek(offset + i) == ord(c) for i, c in enumerate(text))

    def fail(self, what: str, at: int | None = None) -> JsRegexError:
        return JsRegexError(f"{what} at offset {self.at if at is None else at}")

    # ------------------------------------------------------------------ structure

    def parse(self) -> Node:
        tree = self.disjunction()
        if self.peek() is not None:
            raise self.fail("an unmatched ')' (JavaScript refuses it)")
        return tree

    def disjunction(self) -> Node:
        options: list[Node] = [self.alternative()]
        while self.is_("|"):
            self.at += 1
            options.append(self.alternative())
        return options[0] if len(options) == 1 else Alt(options)

    def alternative(self) -> Seq:
        seq = Seq()
        while self.peek() is not None and not self.is_("|") and not self.is_(")"):
            start = self.at
            atom = self.term()
            counted = self.quantifier(start)
            if counted is not None:
                if isinstance(atom, Anchor):
                    raise self.fail("a quantifier on an assertion (JavaScript refuses it)",
                                    start)  # fmt: skip
                atom = Rep(atom, *counted)
            seq.items.append(atom)
        return seq

    def quantifier(self, start: int) -> tuple[int, int | None] | None:
        char = self.peek()
        found: tuple[int, int | None] | None = None
        if char in (ord("*"), ord("+"), ord("?")):
            self.at += 1
            found = {ord("*"): (0, None), ord("+"): (1, None), ord("?"): (0, 1)}[char]
        elif char == ord("{"):
            found = self.braces()
            if found is None:
                return None
        else:
            return None
        if self.is_("?"):
            self.at += 1  # lazy: the same answer to test()
        low, high = found
        if high is not None and high < low:
            raise self.fail("a quantifier {n,m} with m below n (JavaScript refuses it)", start)
        if max(low, high or 0) > REPEAT_MAX:
            raise self.fail(f"a count above {REPEAT_MAX} (RE2's limit)", start)
        return found

    def braces(self) -> tuple[int, int | None] | None:
        """{n}, {n,} or {n,m}; None when the brace is a literal (without `u`)."""
        text = "".join(map(chr, self.u[self.at : self.at + 64]))
        found = BRACES.match(text)
        if found is None:
            if self.mode.unicode:
                raise self.fail("a lone '{' (JavaScript refuses it under u)")
            return None
        self.at += found.end()
        low = int(found.group(1))
        if found.group(2) is None:
            return low, low
        return low, int(found.group(3)) if found.group(3) else None

    def term(self) -> Node:
        char = self.peek()
        assert char is not None
        start = self.at
        if char in (ord("*"), ord("+"), ord("?")):
            raise self.fail("a quantifier with nothing to repeat (JavaScript refuses it)")
        if char == ord("{") and self.braces_ahead():
            raise self.fail("a quantifier with nothing to repeat (JavaScript refuses it)")
        self.at += 1
        if char == ord("^") or char == ord("$"):
            return Anchor(chr(char), start)
        if char == ord("("):
            return self.group(start)
        if char == ord("["):
            return self.char_class(start)
        if char == ord("."):
            every = [(0, self.mode.last)]
            return Chars(every if self.mode.dotall else complement(TERMINATORS, self.mode.last))
        if char == ord("\\"):
            return self.escape(start)
        if char in (ord("]"), ord("}"), ord("{")) and self.mode.unicode:
            raise self.fail(f"a lone {chr(char)!r} (JavaScript refuses it under u)", start)
        return self.literal(char)

    def braces_ahead(self) -> bool:
        saved = self.at
        try:
            return self.braces() is not None
        except JsRegexError:
            return False
        finally:
            self.at = saved

    def literal(self, point: int) -> Chars:
        return Chars(closed([(point, point)], self.mode))

    def group(self, start: int) -> Node:
        if self.is_("?"):
            if self.is_("?=") or self.is_("?!") or self.is_("?<=") or self.is_("?<!"):
                raise self.fail("a look-around (RE2 has none)", start)
            if self.is_("?:"):
                self.at += 2
            elif self.is_("?<"):
                self.group_name(start)
            else:
                raise self.fail("a group '(?' JavaScript does not know", start)
        inner = self.disjunction()
        if not self.is_(")"):
            raise self.fail("an unclosed group (JavaScript refuses it)", start)
        self.at += 1
        return Seq([inner])

    def group_name(self, start: int) -> None:
        self.at += 2
        name: list[str] = []
        while self.peek() is not None and not self.is_(">"):
            name.append(chr(self.u[self.at]))
            self.at += 1
        text = "".join(name)
        if not self.is_(">") or not text.replace("$", "_").isidentifier() or text in self.names:
            raise self.fail("a group name JavaScript refuses (empty, not an identifier, or "
                            "given twice)", start)  # fmt: skip
        self.names.add(text)
        self.at += 1

    # ------------------------------------------------------------------ escapes

    def escape(self, start: int) -> Node:
        char = self.peek()
        if char is None:
            raise self.fail("a trailing backslash (JavaScript refuses it)", start)
        if chr(char) in "bB":
            self.at += 1
            return Anchor(chr(char), start)
        if chr(char) in CLASS_ESCAPES:
            self.at += 1
            base, negated = self.class_escape(chr(char))
            return Chars(closed(complement(base, self.mode.last) if negated else base, self.mode))
        if chr(char) in "123456789":
            raise self.fail(f"\\{chr(char)}, a back-reference or octal escape (RE2 has none)",
                            start)  # fmt: skip
        if char == ord("k") and (self.mode.unicode or self.named):
            raise self.fail("\\k, a named back-reference (RE2 has none)", start)
        return self.literal(self.char_escape(start, in_class=False))

    def class_escape(self, letter: str) -> tuple[Intervals, bool]:
        """(members, negated) of \\d \\D \\w \\W \\s \\S."""
        base = {"d": DIGIT, "s": SPACE, "w": WORD}[letter.lower()]
        if letter.lower() == "w" and self.mode.unicode and self.mode.ignore:
            base = WORD_UI
        return base, letter.isupper()

    def char_escape(self, start: int, in_class: bool) -> int:
        """The one unit (or code point) of an escape other than a class escape."""
        char = self.u[self.at]
        self.at += 1
        if char in CONTROL:
            return CONTROL[char]
        if char == ord("0") and not (self.peek() is not None and chr(self.peek() or 0).isdigit()):
            return 0
        if char == ord("0") or chr(char) in "123456789":
            raise self.fail("an octal escape (not translated)", start)
        if char == ord("c"):
            letter = self.peek()
            if letter is not None and chr(letter).isascii() and chr(letter).isalpha():
                self.at += 1
                return letter % 32
            if self.mode.unicode or in_class:
                raise self.fail("a control escape \\c without a letter (not translated)", start)
            self.at -= 1  # Annex B: a backslash, then 'c'
            return ord("\\")
        if char == ord("x"):
            value = _hex(self.u[self.at : self.at + 2]) if self.at + 2 <= len(self.u) else None
            if value is not None:
                self.at += 2
                return value
        elif char == ord("u"):
            return self.unicode_escape(start)
        if in_class and char == ord("b"):
            return 8
        if in_class and char == ord("-") and self.mode.unicode:
            return char
        if self.mode.unicode:
            if char in SYNTAX:
                return char
            raise self.fail(f"the escape \\{chr(char)} (JavaScript refuses it under u)", start)
        if chr(char) in "pP":
            return char  # without u, \p is p
        return char

    def unicode_escape(self, start: int) -> int:
        if self.mode.unicode and self.is_("{"):
            end = self.u.index(ord("}"), self.at) if ord("}") in self.u[self.at :] else -1
            value = _hex(self.u[self.at + 1 : end]) if end > 0 else None
            if value is None or value > 0x10FFFF:
                raise self.fail("a \\u{…} JavaScript refuses", start)
            self.at = end + 1
            return value
        value = _hex(self.u[self.at : self.at + 4]) if self.at + 4 <= len(self.u) else None
        if value is None:
            if self.mode.unicode:
                raise self.fail("a \\u without four hex digits (JavaScript refuses it under u)",
                                start)  # fmt: skip
            return ord("u")
        self.at += 4
        if self.mode.unicode and 0xD800 <= value <= 0xDBFF and self.is_("\\u"):
            low = _hex(self.u[self.at + 2 : self.at + 6])
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                self.at += 6
                return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        if self.mode.unicode and 0xD800 <= value <= 0xDFFF:
            raise self.fail("a lone surrogate escape under u (not translated)", start)
        return value

    # ------------------------------------------------------------------ classes

    def char_class(self, start: int) -> Chars:
        negate = self.is_("^")
        if negate:
            self.at += 1
        members: Intervals = []
        while not self.is_("]"):
            if self.peek() is None:
                raise self.fail("an unclosed class '[' (JavaScript refuses it)", start)
            low = self.class_atom(start)
            if self.is_("-") and not self.is_("-]"):
                self.at += 1
                high = self.class_atom(start)
                if isinstance(low, int) and isinstance(high, int):
                    if high < low:
                        raise self.fail("a class range out of order (JavaScript refuses it)",
                                        start)  # fmt: skip
                    members.append((low, high))
                    continue
                if self.mode.unicode:
                    raise self.fail("a class range with a class escape at an end (JavaScript "
                                    "refuses it under u)", start)  # fmt: skip
                members += [*self.spans_of(low), (ord("-"), ord("-")), *self.spans_of(high)]
                continue
            members += self.spans_of(low)
        self.at += 1
        return Chars(closed(members, self.mode, negate))

    def spans_of(self, atom: int | Intervals) -> Intervals:
        return [(atom, atom)] if isinstance(atom, int) else atom

    def class_atom(self, start: int) -> int | Intervals:
        char = self.u[self.at]
        self.at += 1
        if char != ord("\\"):
            return char
        letter = self.peek()
        if letter is None:
            raise self.fail("a trailing backslash (JavaScript refuses it)", start)
        if chr(letter) in CLASS_ESCAPES:
            self.at += 1
            base, negated = self.class_escape(chr(letter))
            return complement(base, self.mode.last) if negated else base
        if chr(letter) in "123456789" or (letter == ord("k") and self.mode.unicode):
            raise self.fail(f"\\{chr(letter)} in a class (not translated)", start)
        return self.char_escape(start, in_class=True)

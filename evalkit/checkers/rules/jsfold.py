"""Sets of characters as JavaScript's `RegExp` sees them: intervals, and case folding.

Without the `u` flag JavaScript matches UTF-16 code units and folds case by
`toUpperCase` (a character whose upper case is several characters, or a non-ASCII one
whose upper case is ASCII, folds to itself: the Kelvin sign matches only itself, `ſ` never
matches `s`). With `u` it matches code points and folds by Unicode's simple case folding
(`ſ` matches `s`, the Kelvin sign `k`). Two characters match under `i` when they fold to
the same character; a set is closed over that before it is matched or negated.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache

Intervals = list[tuple[int, int]]
"""Sorted, disjoint, inclusive [low, high] pairs."""

UNITS = 0xFFFF
"""The last code unit without `u`."""
POINTS = 0x10FFFF
"""The last code point with `u`."""

SIMPLE_ONLY = {
    0x1E9E: 0xDF, 0x1FBC: 0x1FB3, 0x1FCC: 0x1FC3, 0x1FFC: 0x1FF3,
    **{c: c - 8 for lo in (0x1F88, 0x1F98, 0x1FA8) for c in range(lo, lo + 8)},
}  # fmt: skip
"""Simple case foldings of characters whose full folding is several characters
(CaseFolding.txt's `S` lines); every other simple folding is Python's `casefold`."""
CASED_ASTRAL = ((0x10400, 0x10FFF), (0x11800, 0x118FF), (0x16E40, 0x16E9F), (0x1E900, 0x1E95F))
"""The astral blocks holding characters with case (Deseret to Adlam)."""


def normal(spans: Intervals) -> Intervals:
    out: Intervals = []
    for low, high in sorted(spans):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def complement(spans: Intervals, last: int) -> Intervals:
    out: Intervals = []
    start = 0
    for low, high in normal(spans):
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= last:
        out.append((start, last))
    return out


def contains(spans: Intervals, point: int) -> bool:
    at = bisect_right(spans, (point, POINTS + 1)) - 1
    return at >= 0 and spans[at][0] <= point <= spans[at][1]


def _upper_fold(unit: int) -> int:
    """JavaScript's Canonicalize without `u`."""
    if 0xD800 <= unit <= 0xDFFF:
        return unit
    upper = chr(unit).upper()
    if len(upper) != 1 or ord(upper) > UNITS:
        return unit
    return unit if unit >= 128 and ord(upper) < 128 else ord(upper)


def _simple_fold(point: int) -> int:
    """JavaScript's Canonicalize with `u`: Unicode's simple case folding."""
    if point in SIMPLE_ONLY:
        return SIMPLE_ONLY[point]
    if 0xD800 <= point <= 0xDFFF:
        return point
    folded = chr(point).casefold()
    return ord(folded) if len(folded) == 1 else point


@lru_cache(maxsize=2)
def _orbits(unicode: bool) -> tuple[list[int], dict[int, tuple[int, ...]]]:
    """(the characters that share their folding with another, each one's orbit)."""
    fold = _simple_fold if unicode else _upper_fold
    blocks = [(0, UNITS), *CASED_ASTRAL] if unicode else [(0, UNITS)]
    groups: dict[int, list[int]] = {}
    for low, high in blocks:
        for point in range(low, high + 1):
            groups.setdefault(fold(point), []).append(point)
    orbit: dict[int, tuple[int, ...]] = {}
    for members in groups.values():
        every = tuple(sorted(members))
        if len(every) > 1:
            for point in every:
                orbit[point] = every
    return sorted(orbit), orbit


def case_closed(spans: Intervals, unicode: bool) -> Intervals:
    """Every character that folds to the folding of one in spans."""
    spans = normal(spans)
    cased, orbit = _orbits(unicode)
    extra = [(p, p) for c in cased if contains(spans, c) for p in orbit[c]]
    return normal(spans + extra) if extra else spans

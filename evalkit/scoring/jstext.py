"""`JSON.stringify` of a value `JSON.parse` made: the text a `claude plugin eval` grader
matches a tool call's input and the trace's events against, and the one text evalkit reads a
tool call's input as (`input_text`), so a pattern means the same in a rules condition, a
plugin grader and the scan of what the model was sent.

Compact (no spaces), keys in JavaScript's order (array-index keys first, ascending, then the
rest as inserted), numbers as JavaScript writes its doubles (`1e+21`, `0.000001`, `1e-7`,
an integer past 2**53 rounded, one past the largest double `null`), strings escaped as
JavaScript escapes them (a lone surrogate as `\\udXXX`, U+2028 left as it is).
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")
_INDEX_MAX = 2**32 - 2


def _index(key: str) -> int | None:
    """The array index a key names, when it is one (canonical, below 2**32 - 1)."""
    if not key.isdigit() or not key.isascii() or (len(key) > 1 and key[0] == "0"):
        return None
    value = int(key)
    return value if value <= _INDEX_MAX else None


def _keys(obj: dict[str, Any]) -> list[str]:
    indexed = sorted((i, k) for k in obj if (i := _index(k)) is not None)
    named = [k for k in obj if _index(k) is None]
    return [k for _, k in indexed] + named


def js_number(value: float | int) -> str:
    """Number::toString of the double nearest value."""
    try:
        number = float(value)
    except OverflowError:
        return "null"
    if number != number or number in (float("inf"), float("-inf")):
        return "null"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    mantissa, _, exp = repr(abs(number)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    shift = int(exp) if exp else 0
    if whole.strip("0"):
        point = len(whole) + shift  # where the decimal point falls among the digits
    else:  # 0.000123: the zeros after the point move it left
        point = shift - (len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    return sign + _layout(digits, point)


def _layout(digits: str, n: int) -> str:
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    exp = n - 1
    mark = f"e{'+' if exp >= 0 else '-'}{abs(exp)}"
    return (digits[0] + ("." + digits[1:] if k > 1 else "")) + mark


def js_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", out) if _LONE.search(out) else out


def js_stringify(value: Any) -> str:
    """JSON.stringify(value) for what JSON.parse returns (objects, arrays, strings, numbers,
    booleans, null)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = [f"{js_string(str(k))}:{js_stringify(value[k])}" for k in _keys(value)]
        return "{" + ",".join(parts) + "}"
    return js_string(str(value))


def input_text(value: Any) -> str:
    """A tool call's input as text: the one serialisation of a call, everywhere a rule or a
    scan reads one (held by `tests/unit/scoring/test_one_reading.py`). It is the runner's
    own, so a regex written against `claude plugin eval` matches here alike."""
    return js_stringify(value)


def tool_use_line(name: str, given: Any, result: str | None) -> str:
    """One tool call as a trace line, its input through `input_text`: what a `trace`
    condition searches for a call."""
    return (
        f'{{"type":"tool_use","name":{js_string(name)},"input":{input_text(given)},'
        f'"result":{js_stringify(result)}}}'
    )

"""No function in the package reaches 60 lines, measured from its own source.

A function counts from its `def` (decorators aside) to its last line. A CLI command counts
its body only: its signature is the table of its options, and its body is what must stay
short (parse, one library call, print).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import evalkit

PACKAGE = Path(evalkit.__file__).resolve().parent
LIMIT = 59
NOT_CODE = ("templates",)
"""Folders of data that happens to hold .py files (the suites `init` writes)."""

ALLOWED: frozenset[str] = frozenset(
    {
        # Functions still over the limit. This list may only shrink: an entry that is no
        # longer over the limit (or no longer exists) fails the test below.
        # Data tables: a reference module's fabricated cases, one literal each.
        "checkers/adr_discrimination/reference.py:_positive_cases",
        "checkers/adr_eval_b/reference.py:_retrieval_cases",
    }
)


def _is_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "command":
            return True
    return False


def _length(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    end = node.end_lineno or node.lineno
    start = node.body[0].lineno if _is_command(node) else node.lineno
    return end - start + 1


@functools.cache
def function_lengths() -> dict[str, int]:
    """`path:name` of every function and method in the package, with its length (parsed once
    a process: both tests below read the same tree)."""
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in NOT_CODE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                key = f"{rel.as_posix()}:{node.name}"
                found[key] = max(found.get(key, 0), _length(node))
    return found


def test_no_function_runs_past_the_limit() -> None:
    lengths = function_lengths()
    over = sorted(
        f"{name} ({n} lines)" for name, n in lengths.items() if n > LIMIT and name not in ALLOWED
    )
    assert not over, f"functions over {LIMIT} lines: {over}"


def test_the_allow_list_only_names_functions_still_over_the_limit() -> None:
    lengths = function_lengths()
    stale = sorted(name for name in ALLOWED if lengths.get(name, 0) <= LIMIT)
    assert not stale, f"no longer over {LIMIT} lines, drop from ALLOWED: {stale}"


def test_a_long_function_is_found() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    node = ast.parse(f"def long():\n{body}\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    assert _length(node) == LIMIT + 1

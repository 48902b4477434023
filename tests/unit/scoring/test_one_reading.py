"""One reading of a tool call on the scoring path, read from the code itself: every text made
of a call's input goes through `scoring/jstext.input_text`, and every judgement that a call
failed through `scoring/transcript.failed`. A second serialisation or a second definition
would let two rules read the same call two ways (issue: `input:` matched sorted Python JSON
while the plugin graders matched the runner's)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.heavy

PACKAGE = Path(__file__).resolve().parents[3] / "evalkit"
SCORING_PATH = ("scoring", "checkers")
SERIALISERS = {"dumps", "js_stringify", "stringify"}
INPUT_NAMES = {"input", "given"}
READS_ALLOWED = {("scoring/transcript.py", "failed")}
"""Where a call's `is_error` may be read: the one definition."""


def _modules() -> list[Path]:
    return sorted(p for top in SCORING_PATH for p in (PACKAGE / top).rglob("*.py"))


def _mentions_input(node: ast.AST) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr == "input":
            return True
        if isinstance(inner, ast.Name) and inner.id in INPUT_NAMES:
            return True
        if isinstance(inner, ast.Constant) and inner.value == "input":
            return True
    return False


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def serialisations(tree: ast.AST) -> list[int]:
    """Lines that turn a tool call's input into text by a serialiser of their own."""
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and _called(node) in SERIALISERS
        and any(_mentions_input(a) for a in [*node.args, *(k.value for k in node.keywords)])
    )


def _enclosing(tree: ast.AST) -> dict[int, str]:
    owner: dict[int, str] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef):
            for inner in ast.walk(fn):
                if hasattr(inner, "lineno"):
                    owner.setdefault(inner.lineno, fn.name)
    return owner


def failure_reads(tree: ast.AST, where: str) -> list[int]:
    """Lines reading a call's `is_error`, or its text for the CLI's error tag, outside the
    one definition (a result event's own `is_error`, `result.is_error`, is another fact)."""
    owner = _enclosing(tree)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "is_error":
            holder = node.value
            is_result = (isinstance(holder, ast.Name) and holder.id == "result") or (
                isinstance(holder, ast.Attribute) and holder.attr == "result"
            )
            if not is_result and (where, owner.get(node.lineno, "")) not in READS_ALLOWED:
                lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.startswith("<tool_use_error>"):
                lines.append(node.lineno)
    return sorted(lines)


def _scan(rule: str) -> list[str]:
    found = []
    for path in _modules():
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith("scoring/streams/") or path.name == "reference.py":
            continue  # the normalisers set the mark from each agent's own; references fabricate
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = serialisations(tree) if rule == "serialise" else failure_reads(tree, where)
        found += [f"{where}:{n}" for n in lines]
    return found


def test_every_tool_call_input_is_written_by_input_text_alone() -> None:
    found = _scan("serialise")
    assert not found, f"a tool call's input serialised outside input_text: {found}"


def test_every_failed_call_is_judged_by_failed_alone() -> None:
    found = _scan("failed")
    assert not found, f"a call's failure read outside scoring/transcript.failed: {found}"


def test_the_scans_find_a_planted_second_reading() -> None:
    planted = ast.parse(
        "import json\n"
        "def text(call):\n    return json.dumps(call.input, sort_keys=True)\n"
        "def bad(call):\n    return call.is_error is True or call.result.startswith('x')\n"
        "def tagged(call):\n    return (call.result or '').startswith('<tool_use_error>')\n"
    )
    assert serialisations(planted) == [3]
    assert failure_reads(planted, "scoring/x.py") == [5, 7]

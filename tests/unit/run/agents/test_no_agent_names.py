"""Nothing outside an agent's adapter asks for an agent by name: read from the code itself,
no module of `evalkit/` outside `run/agents/`, `scoring/streams/` and `reference/wire/`
compares a value with "claude", "codex" or "gemini" (==, !=, in, match) or keys a table by
one. Callers ask the adapter's declared capabilities instead."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[4] / "evalkit"
NAMES = {"claude", "codex", "gemini"}
ADAPTER_HOMES = ("run/agents/", "scoring/streams/", "reference/wire/")


def _names_in(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_in(e) for e in node.elts)
    return False


def name_uses(tree: ast.AST) -> list[int]:
    """Lines that compare with an agent's name, match one, or key a table by one."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            _names_in(side) for side in [node.left, *node.comparators]
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and _names_in(node.value):
            lines.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(k is not None and _names_in(k) for k in node.keys):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_module_outside_the_adapters_compares_an_agents_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(ADAPTER_HOMES):
            continue
        text = path.read_text(encoding="utf-8")
        if not any(f'"{n}"' in text or f"'{n}'" in text for n in NAMES):
            continue  # no name quoted at all: nothing to parse
        tree = ast.parse(text)
        found += [f"evalkit/{rel}:{line}" for line in name_uses(tree)]
    assert found == []


def test_the_scan_finds_a_planted_comparison() -> None:
    planted = 'if agent == "codex":\n    pass\nx = agent in ("claude", "gemini")\n'
    planted += 'y = {"gemini": 1}.get(agent)\nmatch agent:\n    case "claude":\n        pass\n'
    assert name_uses(ast.parse(planted)) == [1, 3, 4, 6]


def test_the_default_agent_is_asked_for_only_where_a_bundle_decides_to_name_its_agent() -> None:
    """`is_default` is a name comparison by another spelling: outside the adapters it may
    decide only whether a rep's bundle names its agent (Claude Code's rows predate the
    field); a behaviour asks a declared capability instead."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(ADAPTER_HOMES) or "is_default" not in path.read_text(encoding="utf-8"):
            continue
        calls = [
            node.lineno
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "is_default"
        ]
        if rel != "run/rep.py" or len(calls) != 1:
            found += [f"evalkit/{rel}:{line}" for line in calls]
    assert found == []

"""records/ sits below run/, reference/ and compare/: it owns the results folder, and nothing
it needs for that may come from the layers that run agents, prove the instrument or compare
folders. Every import counts, at the top of a module, inside a function or for types only."""

from __future__ import annotations

import ast
from pathlib import Path

import evalkit.records

ABOVE = ("run", "reference", "compare", "ci", "cli")
RECORDS = Path(evalkit.records.__file__).parent


def upward_imports(source: str, package: str = "evalkit.records") -> list[str]:
    """Every module of a layer above records that source imports, by line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] if base == "evalkit" else [base]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "evalkit" and parts[1] in ABOVE:
                found.append(f"line {node.lineno}: {name}")
    return found


def test_records_imports_nothing_from_run_reference_or_compare() -> None:
    found = {
        str(path.relative_to(RECORDS.parent)): hits
        for path in sorted(RECORDS.rglob("*.py"))
        if (hits := upward_imports(path.read_text(encoding="utf-8")))
    }
    assert found == {}, found


def test_a_planted_upward_import_is_named_wherever_it_hides() -> None:
    planted = (
        "from typing import TYPE_CHECKING\n"
        "from evalkit.records.folder.workdir import Workdir\n"
        "if TYPE_CHECKING:\n"
        "    from evalkit.run.runner import RunContext\n"
        "def f():\n"
        "    import evalkit.compare.stats\n"
        "    from evalkit import reference\n"
        "    from ..run import grid\n"
    )
    assert upward_imports(planted) == [
        "line 4: evalkit.run.runner",
        "line 6: evalkit.compare.stats",
        "line 7: evalkit.reference",
        "line 8: evalkit.run",
    ]

"""The runner sits below the reference behaviour and the comparisons: read from the code's own
imports (type-only and function-local ones too), nothing in `evalkit/run/` imports
`evalkit.reference` or `evalkit.compare`, and its modules import one another without a circle."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "evalkit" / "run"
ABOVE_RUN = ("evalkit.reference", "evalkit.compare")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, package: str) -> set[str]:
    """Every module a file imports anywhere in it, relative imports resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {m for m in imported(path, package) if m in files and m != name}
    return graph


def upward(root: Path) -> list[str]:
    return sorted(
        f"{name} imports {target}"
        for name, targets in _all_imports(root).items()
        for target in targets
        if target.startswith(ABOVE_RUN)
    )


def _all_imports(root: Path) -> dict[str, set[str]]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found[name] = imported(path, package)
    return found


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle, as the modules around it, or [] when there is none."""
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        trail.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*trail[trail.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        trail.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_run_imports_nothing_from_reference_or_compare() -> None:
    found = upward(RUN)
    assert found == [], "upward imports: " + "; ".join(found)


def test_the_import_graph_of_run_has_no_circle() -> None:
    found = cycle(import_graph(RUN))
    assert found == [], "import circle: " + " -> ".join(found)


def plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "evalkit" / "run"
    root.mkdir(parents=True)
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_planted_function_local_upward_import_is_found(tmp_path: Path) -> None:
    root = plant(tmp_path, {"a.py": "def f():\n    from evalkit.compare.sprt import bounds\n"})
    assert upward(root) == [
        "evalkit.run.a imports evalkit.compare.sprt",
        "evalkit.run.a imports evalkit.compare.sprt.bounds",
    ]


def test_a_planted_type_only_circle_is_found(tmp_path: Path) -> None:
    root = plant(
        tmp_path,
        {
            "a.py": "from evalkit.run.b import B\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from evalkit.run.a import A\n",
        },
    )
    assert cycle(import_graph(root)) == ["evalkit.run.a", "evalkit.run.b", "evalkit.run.a"]


def test_a_relative_import_counts(tmp_path: Path) -> None:
    root = plant(tmp_path, {"a.py": "from . import b\n", "b.py": "from .a import x\n"})
    assert cycle(import_graph(root)) == ["evalkit.run.a", "evalkit.run.b", "evalkit.run.a"]

"""The package's layers, measured from its own imports: no module imports from a layer above.

Bottom to top: the foundation (`errors`, `forked`, `outpaths`, `models`, ...), then scoring,
checkers, suite, records, run, reference, ci, exports, compare, loops, tune and cli. A module may
import from its own layer or any below it. Every import counts: at module level, inside a
function, under `TYPE_CHECKING`, and relative ones resolved to the module they name.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import evalkit

PACKAGE = Path(evalkit.__file__).resolve().parent
FOUNDATION = ("errors", "forked", "outpaths", "models", "stats", "inference", "pins")
LAYERS = (
    "scoring", "checkers", "suite", "records", "run", "reference",
    "ci", "exports", "compare", "loops", "tune", "cli",
)  # fmt: skip
NOT_CODE = ("templates",)
"""Folders of data that happens to hold .py files (the suites `init` writes)."""

ALLOWED: frozenset[tuple[str, str]] = frozenset()
"""Upward imports still tolerated: none. A pair added here must name the change that removes
it, and the test below fails once it no longer exists."""


def layer_of(module: str) -> int | None:
    """0 for the foundation, then 1.. up the order; None outside evalkit."""
    parts = module.split(".")
    if parts[0] != "evalkit":
        return None
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1]) + 1
    return 0


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every module a file imports, anywhere in it, relative imports resolved."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                kept = parts[: len(parts) - node.level + 1]
                base = ".".join(kept + ([node.module] if node.module else []))
            if base == "evalkit" or not node.module:
                # `from evalkit import models`, `from . import x`: each name may be a module
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def upward_imports(root: Path) -> dict[tuple[str, str], list[str]]:
    """(module, imported module) -> where, for every import from a layer above the module's."""
    upward: dict[tuple[str, str], list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in NOT_CODE or "__pycache__" in rel.parts:
            continue
        module = module_name(path, root)
        own = layer_of(module)
        assert own is not None
        source = path.read_text(encoding="utf-8")
        for line, target in imported_modules(source, module, path.name == "__init__.py"):
            theirs = layer_of(target)
            if theirs is not None and theirs > own:
                upward.setdefault((module, target), []).append(f"{rel}:{line}")
    return upward


@functools.cache
def _measured() -> dict[tuple[str, str], list[str]]:
    return upward_imports(PACKAGE)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = _measured()
    named = [f"{where[0]}: {m} imports {t}" for (m, t), where in sorted(upward.items())
             if (m, t) not in ALLOWED]  # fmt: skip
    assert not named, "\n".join(named)


def test_every_allowed_upward_import_still_exists() -> None:
    """The allowlist only shrinks: a pair its change removed must leave the list with it."""
    gone = sorted(ALLOWED - set(_measured()))
    assert not gone, "\n".join(f"{m} no longer imports {t}" for m, t in gone)


def test_every_package_has_a_layer() -> None:
    tops = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    tops |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert tops - set(LAYERS) - set(NOT_CODE) <= set(FOUNDATION)


def test_a_planted_upward_import_is_named(tmp_path: Path) -> None:
    root = tmp_path / "evalkit"
    (root / "scoring").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "scoring" / "__init__.py").write_text("")
    (root / "models.py").write_text("from evalkit.scoring import decide\n")
    (root / "scoring" / "planted.py").write_text(
        "from evalkit.models import Model\n"
        "from . import decide\n"
        "def f() -> None:\n"
        "    from ..suite import config\n"
        "    from ..suite.lock import freeze\n"
        "    import evalkit.cli.app\n"
    )
    upward = upward_imports(root)
    assert sorted(upward) == [
        ("evalkit.models", "evalkit.scoring"),
        ("evalkit.scoring.planted", "evalkit.cli.app"),
        ("evalkit.scoring.planted", "evalkit.suite"),
        ("evalkit.scoring.planted", "evalkit.suite.lock"),
    ]
    assert upward[("evalkit.scoring.planted", "evalkit.suite")] == ["scoring/planted.py:4"]

"""The code map (`docs/architecture.md`) is true: every package of evalkit has exactly one
row, and every module a row names exists, in the package the row is for or by its path."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "evalkit"
NAMED = re.compile(r"`([A-Za-z0-9_./-]+\.py)`")


def _packages() -> set[str]:
    found = {p.parent for p in PACKAGE.rglob("__init__.py") if "templates" not in p.parts}
    return {f"{p.relative_to(REPO).as_posix()}/" for p in found if p != PACKAGE}


def _rows() -> list[tuple[list[str], str]]:
    """(the folders or files a row is for, the rest of its text) for each code-map row."""
    rows = []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `evalkit/"):
            continue
        first, _, rest = line[2:].partition(" | ")
        rows.append((re.findall(r"`([^`]+)`", first), rest))
    return rows


def test_every_package_has_exactly_one_row() -> None:
    counts: dict[str, int] = {}
    for heads, _ in _rows():
        for head in heads:
            counts[head] = counts.get(head, 0) + 1
    missing = sorted(p for p in _packages() if counts.get(p, 0) == 0)
    twice = sorted(p for p in _packages() if counts.get(p, 0) > 1)
    assert not missing and not twice, f"no row: {missing}; more than one: {twice}"


MODULES = {p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*.py")}


def _exists(name: str, heads: list[str]) -> bool:
    """By its path from the repository or from evalkit/, or by its name under a folder
    the row is for."""
    if name in MODULES or f"evalkit/{name}" in MODULES or (REPO / name).is_file():
        return True
    folders = [h for h in heads if h.endswith("/")]
    return any(m.startswith(f) and m.endswith(f"/{name}") for f in folders for m in MODULES)


def test_every_module_a_row_names_exists() -> None:
    gone = sorted(
        f"{heads[0]}: {name}"
        for heads, rest in _rows()
        for name in NAMED.findall(rest)
        if not _exists(name, heads)
    )
    assert not gone, f"the code map names modules that do not exist: {gone}"


def test_every_module_the_page_names_by_its_path_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    gone = sorted({n for n in NAMED.findall(text) if "/" in n and not _exists(n, [])})
    assert not gone, f"the page names modules that do not exist: {gone}"


FOLDER_LIMIT = 22
"""About twenty modules a folder: past that its modules no longer show its jobs. `cli/`
keeps one module per command."""


def test_no_folder_holds_more_than_about_twenty_modules() -> None:
    crowded = sorted(
        f"{folder.relative_to(REPO).as_posix()} ({n})"
        for folder in {p.parent for p in PACKAGE.rglob("*.py")}
        if folder.name != "cli"
        and (n := sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")) > FOLDER_LIMIT
    )
    assert not crowded, f"folders over {FOLDER_LIMIT} modules: {crowded}"

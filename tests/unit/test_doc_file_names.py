"""Every file of this repository the guide names in code spans exists: a page that sends a
reader to a module that moved sends them nowhere."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"`((?:evalkit|bench|tests)/[A-Za-z0-9_./-]+)`")
"""Paths under the package, the benchmarks and the tests; a page's other paths (`docs/adr/`
inside a fixture project, `fixtures/plugins/my-plugin/` of a user's suite) are examples."""


def test_every_repository_file_the_guide_names_exists() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    dead = [
        f"{page.relative_to(REPO)}: {name}"
        for page in pages
        for name in NAMED.findall(page.read_text(encoding="utf-8"))
        if "*" not in name and "<" not in name and not (REPO / name.rstrip("/.")).exists()
    ]
    assert dead == []

"""Writing a suite's own Tasks over the placeholders `evalkit init` wrote, without reading them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evalkit.suite.config import SET_FOLDERS
from evalkit.suite.scenarios import TASK_HEADING


def own_tasks(root: Path, only: str | None = None) -> None:
    """Replace each scenario's Task (or only those whose file name starts with `only`) with
    one of the suite's own."""
    for folder in SET_FOLDERS.values():
        for path in sorted((root / folder).glob("*.md")):
            if only is not None and not path.name.startswith(only):
                continue
            text = path.read_text(encoding="utf-8")
            heading = TASK_HEADING.search(text)
            assert heading is not None, path.name
            path.write_text(
                f"{text[: heading.end()]}\n\nOur own task: item {_number(path.stem)} of the "
                "backlog.\n",
                encoding="utf-8",
            )


def _number(stem: str) -> int:
    """A number of its own for each scenario, so that no Task names a scenario id (a Task
    holding one is refused at freeze)."""
    return int(hashlib.sha256(stem.encode()).hexdigest()[:6], 16)

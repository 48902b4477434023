"""What a rules suite's conditions read from one rep: changed files, tool calls, hooks,
the final message. All of it was written by the agent under test, so files are read
without following links, never more than a capped prefix, and front matter through a
safe YAML loader that refuses aliases (``evalkit.scoring.frontmatter``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.checkers.rules.patterns import MAX_TEXT
from evalkit.models import ToolCall, Transcript
from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.fsdiff import FolderChanges, FolderFiles, compare
from evalkit.scoring.jstext import input_text
from evalkit.scoring.observed import ObservedRun
from evalkit.scoring.safefile import read_capped
from evalkit.scoring.treehash import tree_hash


def read_text(path: Path) -> str:
    """A regular file's text, capped; a link, folder or device is unreadable, not followed."""
    return read_capped(path, MAX_TEXT * 4).decode("utf-8", "replace")[:MAX_TEXT]


def scalar_texts(value: Any) -> list[str] | None:
    """A front-matter value as the strings a pattern is matched against: a scalar, or each
    item of a list of scalars. Nested mappings are not matched (None)."""
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, dt.date | dt.datetime):
        return [value.isoformat()]
    if isinstance(value, str | int | float):
        return [str(value)]
    if isinstance(value, list) and all(
        not isinstance(v, list | dict) and v is not None for v in value
    ):
        return [t for v in value for t in (scalar_texts(v) or [])]
    return None


def tool_input_text(call: ToolCall) -> str:
    """The text an `input:` pattern searches: the call's input as `input_text` writes it."""
    return input_text(call.input)[:MAX_TEXT]


@dataclass
class Effects:
    """One rep's effects, each folder compared with its fixture at most once."""

    sandbox: Path
    fixtures: Mapping[str, Path | FolderFiles]
    transcript: Transcript
    observed: list[ObservedRun] | None = None
    """The observed scripts' runs; None when the suite observes none."""
    observe: tuple[str, ...] = ()
    """The scripts the suite observes."""
    _changes: dict[str, FolderChanges] = field(default_factory=dict)
    _final_tree: list[str | None] = field(default_factory=list)

    def final_tree(self) -> str | None:
        """Git's tree hash of the project as the agent left it (in a replay, as the kept diff
        rebuilt it), taken once; None when it cannot be taken whole."""
        if not self._final_tree:
            self._final_tree.append(tree_hash(str(self.sandbox / "project"), SKIPPED_NAMES))
        return self._final_tree[0]

    def changes(self, name: str) -> FolderChanges | None:
        if name not in self.fixtures:
            return None
        if name not in self._changes:
            self._changes[name] = compare(self.fixtures[name], self.sandbox / name)
        return self._changes[name]

"""The two views of one rep: the world its agent lived in (`/home/alex/src/app`, `~/Notes`)
and the folders that hold the rep now (its sandbox, or verify's replay of it).

A transcript names world paths. Before any rule but the escape rule (which holds world paths
against a reach kept in world paths) reads it, every path it names is mapped back by role:
the project to `<sandbox>/project`, a side store to `<sandbox>/<name>`, the config home, the
plugin copies and HOME to their folders beside the sandbox, a guarded path's world spelling
to the guarded path itself. The world's own spellings are expanded first (`~`, `$HOME`,
`${HOME}`), so a shell command that writes `~/Notes/x.md` is read as the write it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit.models import Transcript, WorldView

BESIDE = {"config": "claude-config", "plugins": "plugins", "home": "home"}
"""Roles whose folder sits beside the sandbox, in the rep's scratch folder, where a view that
does not say otherwise (`WorldView.beside`, an older record) has them."""
_HOME_WORD = re.compile(r"(?<![\w$.~/-])(?:~|\$HOME\b|\$\{HOME\})(?=/|$|[\s'\"`;|&<>()=,:])")


def rep_folders(
    view: WorldView, sandbox: Path, guarded: Mapping[str, Path]
) -> dict[str, str]:
    """world path -> the folder holding that role now; a role with no folder here (a
    guarded path nobody named) is left unmapped."""
    found: dict[str, str] = {}
    for role, world in view.roles.items():
        kind, _, name = role.partition(":")
        if kind == "project":
            found[world] = str(sandbox / "project")
        elif kind == "store":
            found[world] = str(sandbox / name)
        elif kind == "guarded" and name in guarded:
            found[world] = str(guarded[name])
        elif kind in BESIDE:
            found[world] = str(sandbox.parent / _beside(view, kind))
    return found


def _beside(view: WorldView, kind: str) -> str:
    """The folder of a role beside the sandbox, as the view recorded it when it is a plain
    relative path inside the scratch folder, else where the role's folder first sat."""
    named = view.beside.get(kind, "")
    parts = Path(named).parts
    plain = bool(parts) and not Path(named).is_absolute() and ".." not in parts
    return named if plain else BESIDE[kind]


class Mapper:
    """World text into the rep's own: the home's spellings expanded, then each world
    folder replaced by the rep's, the longest first, only where a whole path component
    starts and ends."""

    def __init__(self, view: WorldView, folders: dict[str, str]) -> None:
        self.home = view.home
        self.folders = folders
        worlds = sorted(folders, key=len, reverse=True)
        alternatives = "|".join(re.escape(w) for w in worlds) or r"(?!)"
        self._paths = re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w.-])")

    def text(self, value: str) -> str:
        if "~" in value or "HOME" in value:
            value = _HOME_WORD.sub(lambda _: self.home, value)
        return self._paths.sub(lambda m: self.folders[m.group(0)], value)

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value


def to_rep(
    transcript: Transcript, view: WorldView, sandbox: Path, guarded: Mapping[str, Path]
) -> Transcript:
    """The transcript with every world path it names (the session's folder, each tool
    call's input) mapped onto the rep's folders; results and the agent's prose stay as
    written."""
    mapper = Mapper(view, rep_folders(view, sandbox, guarded))
    mapped = transcript.model_copy(deep=True)
    if mapped.init is not None:
        mapped.init.cwd = mapper.text(mapped.init.cwd)
    for call in mapped.tool_calls:
        call.input = mapper.data(call.input)
    return mapped

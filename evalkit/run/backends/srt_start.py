"""How srt starts a rep's CLI on Linux: through the launcher `closing.py`, from the CLI's
execute-only copy, with no capability and evalkit's system call filter.

The launcher and the filter are written per rep into a folder of its scratch folder that
srt's settings let the rep read and never write; the launcher is the module's code without
its docstrings and comments (the agent can read it, and nothing it reads may name the
measurement), run by the system's `python3`. What it cannot close stays declared: a CLI
whose start is not its own native file or a plain `#!` interpreter, a machine with no
filter table or no system `python3`, and a native program in the install folder the CLI
starts at its own path, which srt gives no way to bind a copy over (Codex's ripgrep, its own
bubblewrap and helper host; the binary that writes Codex's stream is started from its copy,
as its adapter starts that binary itself): each leaves the rep's row saying `cli-memory`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from evalkit.run.backends.bare_source import bare_source
from evalkit.run.backends.exec_only import copy_of, programs, started_as
from evalkit.run.backends.seccomp import program

LAUNCHER = Path(__file__).with_name("closing.py")
"""The launcher's source, read as text: it runs in the rep, never imported here."""
FOLDER = "start"
SCRIPT = "start.py"
FILTER = "calls"
PYTHONS = ("/usr/bin/python3", "/bin/python3")
ADDON = ".node"
"""A Node addon: a library Node loads, never a program it starts."""


@dataclass(frozen=True)
class Start:
    """The words srt's sandbox runs in place of the CLI's path, the files they need to
    read, and whether every program the CLI runs from is then closed to the agent."""

    argv: list[str]
    readable: list[str]
    closed: bool


@lru_cache(maxsize=1)
def script_text() -> str:
    """The launcher's code as the rep holds it: docstrings gone, comments with them."""
    return bare_source(LAUNCHER)


def _python() -> str | None:
    return next((p for p in PYTHONS if os.access(p, os.X_OK)), None)


def plan(cli: Path, install: Path, path: str, scratch: Path) -> Start:
    """The CLI's start under srt for one rep, its files written into `scratch`; the CLI's
    own path and no launcher where it cannot be closed this way."""
    code, python, target = program(), _python(), started_as(cli, path)
    if code is None or python is None or target is None:
        return Start([str(cli.resolve())], [], False)
    started, words = target
    copy = copy_of(started)
    folder = scratch / FOLDER
    folder.mkdir(exist_ok=True)
    for file, text in ((folder / SCRIPT, script_text().encode()), (folder / FILTER, code)):
        file.unlink(missing_ok=True)  # a retried rep's, read-only
        file.write_bytes(text)
        file.chmod(0o444)
    argv = [python, "-I", "-S", str(folder / SCRIPT), str(folder / FILTER), str(copy), *words]
    return Start(argv, [str(folder), str(copy)], _all_closed(started, programs(cli, install, path)))


def _all_closed(started: Path, run_from: list[Path]) -> bool:
    """Whether each program the CLI runs from is the one the launcher starts from its copy
    (or another name of that file), or a Node addon."""
    mine = started.stat()
    for other in run_from:
        st = other.stat()
        if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino) and other.suffix != ADDON:
            return False
    return True

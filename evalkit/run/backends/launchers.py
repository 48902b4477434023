"""The interpreter a launcher on PATH starts, asked for once per self-test.

A version manager's shim (pyenv's, asdf's) is a script that picks an interpreter and
starts it, and on some machines it costs several times what the interpreter does. The
fabricated runs' Bash commands run for real, and a script a suite ships
(`#!/usr/bin/env python3`) starts `python3` on every call, so every call would pay for
the launcher again. The launcher is asked once which executable it starts; a folder put
first on the cases' PATH then holds a `python3` that starts that executable: the same
interpreter runs the same script with the same arguments and environment, and the
launcher's own bookkeeping (its variables, its folders on PATH) is all that is left out.
Where `python3` on PATH already is the interpreter, nothing is put first.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NAMES = ("python3",)
ASK_SECONDS = 60


def started_by(command: str, env: Mapping[str, str], cwd: Path) -> str | None:
    """The absolute path of the executable that `command` starts as an interpreter, or None
    when it does not say."""
    try:
        done = subprocess.run(
            [command, "-c", "import sys; print(sys.executable)"],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=ASK_SECONDS,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    real = lines[-1] if lines else ""
    if done.returncode or not os.path.isabs(real) or not os.access(real, os.X_OK):
        return None
    return real


def direct_folder(folder: Path, env: Mapping[str, str], cwd: Path) -> Path | None:
    """folder, holding for each interpreter name whose first hit on env's PATH is a
    launcher a script that starts the launcher's choice (chosen as from cwd); None when
    every name already starts its interpreter itself."""
    made = False
    for name in NAMES:
        found = shutil.which(name, path=env.get("PATH"))
        if found is None:
            continue
        real = started_by(found, env, cwd)
        if real is None or os.path.realpath(real) == os.path.realpath(found):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / name
        script.write_text(f'#!/bin/sh\nexec {shlex.quote(real)} "$@"\n', encoding="utf-8")
        script.chmod(0o755)
        made = True
    return folder if made else None


PROBES: dict[str, tuple[str, ...]] = {
    "python3": ("-I", "-c", "import sys\nfor p in (sys.executable, sys.base_prefix, *sys.path): "
                "print(p)"),
    "ruby": ("-e", "puts RbConfig.ruby, RbConfig::CONFIG['prefix'], $LOAD_PATH, "
             "(Gem.default_dir rescue '')"),
    "node": ("-e", "const p = require('path'); console.log(process.execPath); "
             "console.log(p.dirname(p.dirname(process.execPath)))"),
}  # fmt: skip
"""What each runtime is asked, one answer a line: the executable it really is, its install
prefix, then the folders it loads its own libraries from."""


@dataclass(frozen=True)
class Interpreter:
    """The real interpreter behind a name on PATH (a wrapper, a shim or a link resolved), and
    the library folders of its own install: folders under its prefix, never the prefix."""

    executable: Path
    libraries: tuple[Path, ...]


def interpreter(name: str, found: str, env: Mapping[str, str]) -> Interpreter | None:
    """What `found` (the first `name` on PATH) runs as, asked from `/` with only env's PATH
    and HOME; None when it does not answer like the runtime it is named for."""
    try:
        done = subprocess.run(
            [found, *PROBES[name]],
            cwd="/",
            env={k: env[k] for k in ("PATH", "HOME") if k in env},
            capture_output=True,
            text=True,
            timeout=ASK_SECONDS,
        )
    except (OSError, subprocess.SubprocessError, KeyError):
        return None
    lines = [x.strip() for x in done.stdout.splitlines() if x.strip()]
    if done.returncode or len(lines) < 2 or not all(os.path.isabs(x) for x in lines[:2]):
        return None
    real, prefix = Path(lines[0]).resolve(), Path(lines[1]).resolve()
    if not (os.access(real, os.X_OK) and real.is_file()):
        return None
    libraries = []
    for line in lines[2:]:
        folder = Path(line).resolve() if os.path.isabs(line) else None
        if folder is None or folder == prefix or prefix not in folder.parents:
            continue
        if folder.is_dir() and folder not in real.parents:
            libraries.append(folder)
    kept = [f for f in libraries if not any(o in f.parents for o in libraries)]
    return Interpreter(real, tuple(dict.fromkeys(kept)))


def shared_libraries(executable: Path) -> list[tuple[Path, Path]]:
    """(the file, the path the loader opens it by) for each shared library `executable`
    links, as `ldd` names them; empty where there is no ldd."""
    ldd = shutil.which("ldd", path="/usr/bin:/bin")
    if ldd is None:
        return []
    try:
        done = subprocess.run([ldd, str(executable)], capture_output=True, text=True,
                              timeout=ASK_SECONDS)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for line in done.stdout.splitlines():
        _, arrow, rest = line.partition("=>")
        path = rest.strip().split(" (")[0].strip() if arrow else ""
        if os.path.isabs(path) and os.path.isfile(path):
            found.append((Path(path).resolve(), Path(path)))
    return found

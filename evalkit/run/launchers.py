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

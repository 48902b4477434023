"""A plugin eval case's `context.scaffold_script`: the fixture project it builds.

The script runs as a suite's build step runs (a subprocess with a time limit, here in an
empty folder of its own with a throwaway HOME), once per change of the script: a stamp
beside the output names the script's hash. It runs twice, and an output that differs
between the two builds is refused, since a fixture that moves cannot be frozen. The output
is the translated suite's project fixture, hashed into the lock like any fixture.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.scoring.hashing import tree_hash

SCAFFOLD_TIMEOUT = 300.0
STAMP = ".scaffold-stamp"
"""Beside the project fixture, in the translated suite: the hash of the script it came from."""


def _build(script: bytes, where: str) -> Path:
    """One build into a fresh folder; the folder, or a ConfigError naming the script."""
    work = Path(tempfile.mkdtemp(prefix="evalkit-scaffold-"))
    (work / "home").mkdir()
    (work / "project").mkdir()
    (work / "scaffold.sh").write_bytes(script)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work / "home"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    try:
        done = subprocess.run(
            ["bash", str(work / "scaffold.sh")], cwd=work / "project", env=env,
            capture_output=True, text=True, timeout=SCAFFOLD_TIMEOUT, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        shutil.rmtree(work, ignore_errors=True)
        raise ConfigError(f"{where}: timed out after {SCAFFOLD_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ConfigError(f"{where}: exited {done.returncode}: {tail[0][:200]}")
    shutil.rmtree(work / "project" / ".git", ignore_errors=True)  # each rep git-inits its own
    return work


def scaffold(script: Path, project: Path, where: str) -> None:
    """Build `project` from the script when it is missing or came from another script."""
    body = script.read_bytes()
    digest = hashlib.sha256(body).hexdigest()
    stamp = project.parent / STAMP
    if project.is_dir() and stamp.is_file() and stamp.read_text().strip() == digest:
        return
    first, second = _build(body, where), _build(body, where)
    try:
        if tree_hash(first / "project") != tree_hash(second / "project"):
            raise ConfigError(
                f"{where}: its output differs between two builds (dates, random names?); a "
                "fixture must come out the same every time"
            )
        shutil.rmtree(project, ignore_errors=True)
        project.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(first / "project"), project)
        stamp.write_text(digest + "\n")
    finally:
        shutil.rmtree(first, ignore_errors=True)
        shutil.rmtree(second, ignore_errors=True)

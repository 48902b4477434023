"""A suite's observed scripts, watched by their effect: each rep runs them through a
wrapper that records every run, however the agent reached the script.

The wrapper sits at the script's own path in the project; the real script is kept beside
the fixture folders (`scoring/observed.py` names the folder), with the log. The wrapper is
valid as sh and as Python: run as a program or through a shell it starts the system
Python on itself; that records the start, runs the real script (a shell script through its
shell, with `$0` as the agent typed it, so a script that finds its folder from `$0` still
does), records the end and exits with the script's status. It reads nothing outside the
rep but that interpreter and shell. Git is told not to see it, and once the agent has
ended the script is put back as the fixture has it, so no diff shows the wrapper.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.run.backends.bare_source import bare_source
from evalkit.run.sandbox import TRANSCRIPT
from evalkit.scoring import treehash
from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.observed import OBSERVE_DIR, log_path

SHELLS = ("sh", "bash", "dash", "zsh", "ksh")
SOURCE = '__script_real=$1; shift; . "$__script_real"'
"""Runs the real script in the shell with $0 and the arguments as the wrapper got them."""


@dataclass(frozen=True)
class Placed:
    """One wrapper in place: what to put back once the agent has ended."""

    target: Path
    original: bytes
    mode: int
    wrapper: bytes


def system_python() -> str:
    for candidate in ("/usr/bin/python3", "/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("python3", path=os.defpath)
    if found is None:
        raise ConfigError("observe: no system python3 found to run the scripts' wrappers")
    return found


def real_command(script: bytes) -> list[str] | None:
    """The shell (and its flags) a script's first line names, or None when it names none."""
    first = script.split(b"\n", 1)[0].decode("utf-8", "replace")
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if words and Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    if not words or Path(words[0]).name not in SHELLS:
        return None
    shell = words[0] if words[0].startswith("/") else shutil.which(words[0])
    return [shell, *words[1:]] if shell else None


_STARTS = """ID = '%d-%d' % (os.getpid(), time.time_ns())
WHERE = os.path.realpath(sys.argv[0])
PHASE = os.environ.pop('__w_phase', '')
if PHASE == 'end':
    try:
        CODE = int(os.environ.get('__w_code', ''))
    except ValueError:
        sys.exit(0)
    RUN, _, WHERE = os.environ.get('__w_id', '').partition('\t')
    note({'event': 'end', 'id': RUN, 'time': time.time(), 'line': lines(), 'exit': CODE,
          'tree': tree(WHERE) if WHERE else None})
    sys.exit(0)
try:
    CWD = os.getcwd()
except OSError:
    CWD = ''
note({'event': 'start', 'id': ID, 'script': SCRIPT, 'cwd': CWD, 'args': ARGS,
      'time': time.time(), 'line': lines()})
if PHASE == 'start':
    print(ID + '\t' + WHERE)
    sys.exit(0)
"""
"""The wrapper's start: a run's start line, or, for the shell half of a sourced run
(`__w_phase`), only its start (printing the id and where the wrapper was found, since a
sourced script may change the shell's folder) or only its end."""


def _sourced_branch(py: str, real: Path) -> str:
    """The wrapper's shell line for being sourced (`. bin/test` in bash): the real script
    is sourced as it would be unwrapped, its start and end logged around it by the wrapper's
    Python half; a script that exits the shell logs no end. Run as a program, it is skipped."""
    return (
        f'if [ -n "${{BASH_SOURCE-}}" ] && [ "${{BASH_SOURCE-}}" != "$0" ]; then '
        f'__w_id=$(__w_phase=start {py} -IS "$BASH_SOURCE" "$@"); '
        f'. {shlex.quote(str(real))} "$@"; __w_code=$?; '
        f'__w_phase=end __w_id="$__w_id" __w_code="$__w_code" {py} -IS "$BASH_SOURCE"; '
        f'__w_done() {{ unset __w_id __w_code; unset -f __w_done; return "$1"; }}; '
        f'__w_done "$__w_code"; return; fi; '
    )


_HELPERS = """def lines():
    try:
        with open(TRANSCRIPT, 'rb') as handle:
            return handle.read(1 << 27).count(b'\\n')
    except OSError:
        return None


def tree(where):
    project = where
    for _ in SCRIPT.split('/'):
        project = os.path.dirname(project)
    return tree_hash(project, TREE_SKIP, ORIGINALS)


def note(record):
    try:
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND)
        os.write(fd, (json.dumps(record) + '\\n').encode())
        os.close(fd)
    except OSError:
        pass


"""
"""The wrapper's helpers: the transcript's complete lines, the project's tree where the
wrapper sat (the folder SCRIPT's depth up from where it was found as the run started: the
agent's world may show it at another path than evalkit's), and one log line appended."""


def _tree_source() -> str:
    """The tree hash's own module as code alone, run inside the wrapper: its docstrings and
    comments are words for evalkit's readers, and an agent that reads `bin/test` must see a
    script's wrapper, not prose about scoring. Its future import is the wrapper's, which
    must come first."""
    return bare_source(Path(treehash.__file__), keep_future=False)


def wrapper_text(
    script: str,
    real: Path,
    log: Path,
    transcript: Path,
    shell: list[str] | None,
    originals: dict[str, str] | None = None,
) -> str:
    """The wrapper of one script; originals maps each observed script (project-relative) to
    its real copy, so the tree hashed at a run's end is the one the kept diff shows."""
    python = system_python()
    run = (
        f"[{', '.join(repr(w) for w in shell)}, '-c', {SOURCE!r}, sys.argv[0], REAL, *ARGS]"
        if shell
        else "[REAL, *ARGS]"
    )
    py = shlex.quote(python)
    sourced = _sourced_branch(py, real)
    return f"""#!/bin/sh
''''true; {sourced}exec {py} -IS "$0" "$@" # '''
from __future__ import annotations
import json, os, subprocess, sys, time
{_tree_source()}
TREE_SKIP = {SKIPPED_NAMES!r}
ORIGINALS = {dict(originals or {})!r}
SCRIPT = {script!r}
REAL = {str(real)!r}
LOG = {str(log)!r}
TRANSCRIPT = {str(transcript)!r}
ARGS = sys.argv[1:]


{_HELPERS}{_STARTS}try:
    CODE = subprocess.call({run})
except OSError:
    CODE = 126
if CODE < 0:
    CODE = 128 - CODE
note({{'event': 'end', 'id': ID, 'time': time.time(), 'line': lines(), 'exit': CODE,
      'tree': tree(WHERE)}})
sys.exit(CODE)
"""


def place_wrappers(scripts: list[str], sandbox: Path) -> list[Placed]:
    """Each observed script of the sandbox's project moved aside and a wrapper put in its
    place, with an empty log: a log missing later was removed."""
    if not scripts:
        return []
    folder = sandbox / OBSERVE_DIR
    (folder / "real").mkdir(parents=True, exist_ok=True)
    log = log_path(sandbox)
    log.write_bytes(b"")
    moved = []
    for index, script in enumerate(scripts):
        target = sandbox / "project" / script
        if not target.is_file() or target.is_symlink():
            raise ConfigError(f"observe: {script} is not a file of the project fixture")
        original = target.read_bytes()
        mode = target.stat().st_mode & 0o7777
        real = folder / "real" / f"{index}-{target.name}"
        real.write_bytes(original)
        real.chmod(mode | 0o500)
        moved.append((script, target, original, mode, real))
    originals = {script: str(real) for script, _, _, _, real in moved}
    placed = []
    for script, target, original, mode, real in moved:
        shell = real_command(original)
        text = wrapper_text(script, real, log, sandbox / TRANSCRIPT, shell, originals)
        wrapper = text.encode("utf-8")
        target.write_bytes(wrapper)
        target.chmod(mode | 0o555)
        placed.append(Placed(target, original, mode, wrapper))
    _hide_from_git(sandbox / "project", scripts)
    return placed


def _hide_from_git(project: Path, scripts: list[str]) -> None:
    if (project / ".git").exists():
        subprocess.run(
            ["git", "-C", str(project), "update-index", "--skip-worktree", "--", *scripts],
            check=False,
            capture_output=True,
        )


def restore_scripts(placed: list[Placed]) -> None:
    """Each wrapper the agent left as it was put back as the fixture has it (one the agent
    changed stays, and its change shows)."""
    for item in placed:
        try:
            if item.target.is_symlink() or item.target.read_bytes() != item.wrapper:
                continue
            item.target.write_bytes(item.original)
            item.target.chmod(item.mode)
        except OSError:
            continue

"""An observed script run again by evalkit, so a run the agent logged is held to what the
script does (`scoring/tampering/reproduced.py` decides; this module only runs and records).

Once the agent's process tree is gone and the scripts are put back, each (script,
arguments) the log says ended on the final tree is run again on a fresh copy of that tree
(the project as the agent left it, which the kept diff shows; the copy's tree hash is
checked to be the final one), in the logged run's folder of the project, with the rep's
time limit and no network. A confined rep's re-run is confined by the rep's own backend,
with nothing of the rep mounted but the copy and a HOME of its own; an unconfined rep's
runs unconfined, as its agent did. When the first re-run's outcome is not a logged one, the
script runs once more, on another fresh copy, so a script whose outcome varies is told from
a logged outcome it never gives. The re-runs are kept in the rep's process record.

Nothing here reaches the agent: the copies live in the rep's scratch folder, outside its
sandbox, made after its last process ended.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from evalkit.models import Rerun
from evalkit.run.backends import backend
from evalkit.run.observe import real_command
from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.observed import LogProblem, ObservedRun, read_runs
from evalkit.scoring.tampering.reproduced import MAX_RERUNS, on_final, rerun_keys
from evalkit.scoring.treehash import tree_hash

PASSED_ON = ("PATH", "LANG", "LC_ALL", "TERM")
POLL_SECONDS = 0.02
MAX_SCRIPT_BYTES = 1 << 20


@dataclass(frozen=True)
class RerunPlan:
    """What a rep's re-runs need: its sandbox and scratch, the suite's scripts and
    environment, where its project appeared in its agent's world, its limit and backend."""

    sandbox: Path
    scratch: Path
    observe: tuple[str, ...]
    environment: dict[str, str]
    hidden: tuple[Path, ...]
    timeout: float
    confine: str | None
    """The backend's name ('' for the platform's default); None: the rep ran unconfined."""
    project_world: str = ""
    stop: threading.Event | None = None
    """Set by an interrupt: a re-run then stops at once and says so."""


def rerun_observed(plan: RerunPlan) -> list[Rerun] | None:
    """evalkit's re-runs of every (script, arguments) the log says ended on the final tree;
    None for a suite that observes nothing, none when the log cannot be read (scoring names
    it) or asks for more re-runs than a rep is given (scoring names that too)."""
    if not plan.observe:
        return None
    try:
        runs = read_runs(plan.sandbox, list(plan.observe))
    except LogProblem:
        return []
    final = tree_hash(str(plan.sandbox / "project"), SKIPPED_NAMES)
    keys = rerun_keys(runs, final)
    if len(keys) > MAX_RERUNS:
        return []
    done = []
    for script, args in keys:
        logged = [r for r in runs if on_final(r, final) and (r.script, r.args) == (script, args)]
        done.append(_rerun(plan, logged, final))
    return done


def _rerun(plan: RerunPlan, logged: list[ObservedRun], final: str | None) -> Rerun:
    """One (script, arguments) run again, and once more when its outcome is not one logged."""
    first = logged[0]
    record = Rerun(script=first.script, args=list(first.args), cwd=_relative(plan, first.cwd),
                   tree=final)  # fmt: skip
    for attempt in range(2):
        code = _once(plan, record, final)
        if isinstance(code, str):
            record.stopped = code
            return record
        record.exits.append(code)
        if attempt == 0 and all(run.ok == (code == 0) for run in logged):
            return record
    return record


def _relative(plan: RerunPlan, cwd: str) -> str:
    """The run's folder relative to the project, from the agent's world path or the
    sandbox's own; the project itself when it lay outside."""
    for root in (plan.project_world, str(plan.sandbox / "project")):
        if root and (cwd == root or cwd.startswith(root.rstrip("/") + "/")):
            rel = os.path.relpath(cwd, root)
            return "." if rel.startswith("..") else rel
    return "."


def _once(plan: RerunPlan, record: Rerun, final: str | None) -> int | str:
    """The script's exit status on a fresh copy of the final tree, or why there is none."""
    folder = Path(tempfile.mkdtemp(prefix="again-", dir=plan.scratch))
    try:
        copy = folder / "project"
        subprocess.run(["cp", "-a", "--", str(plan.sandbox / "project"), str(copy)],
                       capture_output=True, check=False)  # fmt: skip
        command = _command(copy, record)
        if command is None or final is None or tree_hash(str(copy), SKIPPED_NAMES) != final:
            return "unrunnable"
        where = copy / record.cwd
        cwd = where if where.is_dir() and not where.is_symlink() else copy
        return _run(plan, command, cwd, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _command(copy: Path, record: Rerun) -> list[str] | None:
    """How the wrapper would have started the script, from the copy: through the shell its
    first line names, or as a program."""
    script = copy / record.script
    try:
        fd = os.open(script, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(MAX_SCRIPT_BYTES)
    except OSError:
        return None
    shell = real_command(head)
    return [*shell, str(script), *record.args] if shell else [str(script), *record.args]


def _run(plan: RerunPlan, command: list[str], cwd: Path, folder: Path) -> int | str:
    home = folder / "home"
    home.mkdir()
    env = {k: os.environ[k] for k in PASSED_ON if k in os.environ}
    env.update(plan.environment)
    env.update(HOME=str(home), TMPDIR=str(folder))
    fds: tuple[int, ...] = ()
    confined = None
    if plan.confine is not None:
        confined = backend(plan.confine).confine(
            command, env, cwd, [folder], home, Path(command[0]), list(plan.hidden), hosts=set()
        )
        command, env, fds = confined.command, confined.env, confined.pass_fds
    try:
        return _wait(command, cwd, env, fds, plan.timeout, plan.stop)
    finally:
        if confined is not None:
            confined.stop()


def _wait(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    fds: tuple[int, ...],
    timeout: float,
    stop: threading.Event | None = None,
) -> int | str:
    """Its exit status (128 + the signal that ended it), `timeout` or `interrupted`; its
    process group never outlives it."""
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, pass_fds=fds)  # fmt: skip
    except OSError:
        return "unrunnable"
    ends, code, why = time.monotonic() + timeout, None, "timeout"
    try:
        while code is None and time.monotonic() < ends:
            if stop is not None and stop.is_set():
                why = "interrupted"
                break
            try:
                code = proc.wait(timeout=POLL_SECONDS)
            except subprocess.TimeoutExpired:
                pass
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    if code is None:
        return why
    return 128 - code if code < 0 else code

"""One grid at a time per results folder.

A grid (or `grid --resume`) decides which reps to run from what the folder holds, so two
at once would both run every missing rep. The lock is an `flock` on `WORKDIR/grid.lock`,
held for the whole grid and released by the kernel if the process dies; the file names
the holder (pid, host, start time, command) so a second grid can say who it is. `run`
never takes it: a rep of `run` has its own run id and never claims a grid's rep.
`self-test WORKDIR` holds the same kind of lock on its own file, since two self-tests would
lay their sandboxes out at the same paths.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from evalkit.errors import RefusedError
from evalkit.records.folder.regular import check_record

_HELD: dict[Path, int] = {}
_GUARD = threading.Lock()


class GridBusyError(RefusedError):
    """Another grid (or self-test) holds this folder."""


def _describe(holder: dict[str, object]) -> str:
    return (
        f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started "
        f"{holder.get('started', '?')}: evalkit {holder.get('command', '?')}"
    )


def _read_holder(fd: int) -> dict[str, object]:
    data = os.pread(fd, 65536, 0)
    try:
        holder = json.loads(data.decode("utf-8", "replace")) if data.strip() else {}
    except json.JSONDecodeError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _locked(path: Path, what: str) -> int:
    """The lock file, open and locked by this process, or GridBusyError naming its holder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        check_record(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise GridBusyError(
                f"{path.parent}: another {what} is running in this folder ({_describe(holder)}); "
                "wait for it, or stop it first"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder removed the file between our open and our lock; retry


@contextmanager
def hold_grid_lock(
    path: Path, command: str, notes: list[str] | None = None, what: str = "grid"
) -> Iterator[None]:
    """Hold the folder's lock for one `what` (a grid), or raise GridBusyError naming its
    holder. Re-entrant within one process. A lock left by a process that died is taken over,
    with a note."""
    key = path.resolve()
    with _GUARD:
        if key in _HELD:
            _HELD[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _GUARD:
                _HELD[key] -= 1
        return
    fd = _locked(path, what)
    try:
        left = _read_holder(fd)
        if left and notes is not None:
            here = left.get("host") == socket.gethostname()
            state = "no longer running" if here and not _pid_alive(left.get("pid")) else "gone"
            notes.append(f"took over the {what} lock left by {_describe(left)} ({state})")
        mine = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command,
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(mine) + "\n").encode(), 0)
        with _GUARD:
            _HELD[key] = 1
        try:
            yield
        finally:
            with _GUARD:
                del _HELD[key]
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)

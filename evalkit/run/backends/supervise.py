"""The supervisor a backend's launch runs under, so that evalkit's death leaves nothing behind.

`run/agent.py` starts a rep in a session of its own and kills its group when the rep ends,
times out or is interrupted; but when evalkit itself is killed (SIGKILL, the OOM killer),
nothing of evalkit runs to do that. A sandbox that is not evalkit's own child outlives it:
srt's tree keeps running, and a container keeps running after its engine's client dies.

So the launch is this script, run by its own path with the standard library only (it
starts in a few milliseconds): it asks the kernel for SIGTERM when its parent dies
(`PR_SET_PDEATHSIG`), starts the backend's command in its own process group and waits.
On SIGTERM, SIGINT or SIGHUP, from evalkit's own kill or from the parent's death, it runs
the backend's cleanup (removing the rep's container), then kills its whole group.

    python3 supervise.py PARENT_PID [CLEANUP...] -- COMMAND...
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1
CLEANUP_SECONDS = 30.0


class _Ended(Exception):
    """A signal asked the supervisor to end the rep."""


_ending: list[int] = []
"""The signals that asked so far: only the first ends the wait."""


def _end(signum: int, frame: object) -> None:
    """Raise once. The parent-death signal can come more than once: the kernel sends it
    each time the thread the supervisor is a child of exits and it is handed to another
    thread of the dying evalkit (measured: two SIGTERMs in half of the SIGKILLs of a
    threaded parent). A second raise, landing in the cleanup below, would end the
    supervisor before it kills its group, and leave the rep running."""
    _ending.append(signum)
    if len(_ending) == 1:
        raise _Ended


def _cleanup(cleanup: list[str]) -> None:
    """The backend's own way to stop what outlives its client; best effort."""
    if not cleanup:
        return
    try:
        subprocess.run(cleanup, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=CLEANUP_SECONDS, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        pass


def _kill_group() -> None:
    """Everything in the supervisor's group, itself last; only when it leads that group
    (as `run/agent.py` starts it), never a caller's."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> int:
    parent, rest = int(argv[0]), argv[1:]
    split = rest.index("--")
    cleanup, command = rest[:split], rest[split + 1 :]
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _end)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    child = None
    try:
        if os.getppid() != parent:  # evalkit died before the request above was made
            _end(signal.SIGTERM, None)
        # every descriptor the supervisor was handed goes on (bubblewrap's seccomp filter and
        # user namespace): evalkit passed it nothing else
        child = subprocess.Popen(command, close_fds=False)
        return child.wait()
    except _Ended:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        _cleanup(cleanup)
        _kill_group()
        return 128 + signal.SIGTERM


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

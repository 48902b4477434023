"""Launching one headless Claude Code process, and never leaving it behind.

The CLI runs in its own session (process group) so a timeout or an interrupt can
kill it together with every tool process it started.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

PASS_THROUGH_PREFIXES = ("ANTHROPIC_",)
PASS_THROUGH = (
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "SHELL",
    "TERM",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "NODE_EXTRA_CA_CERTS",
)
KILL_GRACE_SECONDS = 3.0
POLL_SECONDS = 0.01
READ_CHUNK = 1 << 16
DRAIN_SECONDS = 5.0


@dataclass
class ProcessOutcome:
    exit_code: int | None
    seconds: float
    stopped: str | None = None
    """None when the process ended by itself; else 'timeout', 'interrupted' or what the
    launch's watch said ('max-turns')."""


def base_environment(
    isolation: dict[str, str], config_dir: Path, max_retries: int
) -> dict[str, str]:
    """A clean environment: only what the CLI needs, the caller's API settings, and isolation.

    Nothing else of the caller's leaks in, so a run started from inside another agent
    session measures the same thing as one started from a plain shell.
    """
    env = {k: v for k, v in os.environ.items() if k in PASS_THROUGH}
    env.update({k: v for k, v in os.environ.items() if k.startswith(PASS_THROUGH_PREFIXES)})
    env.update(isolation)
    env.update(
        CLAUDE_CONFIG_DIR=str(config_dir),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_MAX_RETRIES=str(max_retries),
    )
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """TERM the whole group, then KILL whatever is left after a short grace."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_SECONDS), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGTERM:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            return
        except subprocess.TimeoutExpired:
            continue


def _feed(sock: socket.socket, prompt: bytes | None) -> None:
    """Write the prompt and end the stream; a process that ended first simply never reads
    it. Without a prompt the stream ends at once, as /dev/null would."""
    try:
        if prompt:
            sock.sendall(prompt)
    except OSError:
        pass
    finally:
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        sock.close()


def _keep(sock: socket.socket, kept: BinaryIO) -> None:
    """Copy what the process writes into the kept file, as it comes (a turn watch reads
    the file while the agent runs), until every holder of the other end has closed it."""
    try:
        while chunk := sock.recv(READ_CHUNK):
            kept.write(chunk)
            kept.flush()
    except OSError:
        pass
    finally:
        sock.close()


def _streams() -> tuple[list[socket.socket], list[socket.socket]]:
    """Three connected socket pairs for stdin, stdout and stderr: evalkit's ends, then the
    process's. A socket, unlike a pipe or a file, cannot be opened again through
    `/proc/<pid>/fd/<n>`, so nothing the agent runs can rewrite, swallow or inject what its
    CLI says: the kept files exist only outside, written here."""
    ours, theirs = [], []
    for _ in range(3):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.append(a)
        theirs.append(b)
    theirs[0].shutdown(socket.SHUT_WR)
    for end in theirs[1:]:
        end.shutdown(socket.SHUT_RD)
    return ours, theirs


def run_agent(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    stdout: Path,
    stderr: Path,
    timeout: float,
    stop: threading.Event | None = None,
    prompt: bytes | None = None,
    watch: Callable[[], str | None] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> ProcessOutcome:
    """Run to completion, timeout or stop; what the process writes is kept in stdout's and
    stderr's files by evalkit, which alone holds them open.
    `prompt` is written to the process's stdin, which is then closed: a prompt given as an
    argument or in the environment would be readable by every user of the machine for the
    whole run (`ps`, `/proc/<pid>/cmdline`). `watch`, asked at every poll, names a reason
    to stop the run (a turn cap evalkit holds), or None. `pass_fds` are handed to the
    process (what its sandbox's wrapper reads at start)."""
    started = time.monotonic()
    ours, theirs = _streams()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        try:
            proc = subprocess.Popen(
                command, cwd=cwd, env=env, stdin=theirs[0].fileno(), stdout=theirs[1].fileno(),
                stderr=theirs[2].fileno(), start_new_session=True, pass_fds=pass_fds,
            )  # fmt: skip
        except BaseException:
            for end in (*ours, *theirs):
                end.close()
            raise
        for end in theirs:
            end.close()
        threading.Thread(
            target=_feed, args=(ours[0], prompt), name="evalkit-prompt", daemon=True
        ).start()
        keepers = [
            threading.Thread(target=_keep, args=(sock, kept), name="evalkit-keep")
            for sock, kept in ((ours[1], out), (ours[2], err))
        ]
        for keeper in keepers:
            keeper.start()
        try:
            stopped = _wait(proc, started, timeout, stop, watch)
        except BaseException:
            kill_group(proc)
            _drain(ours, keepers)
            raise
        # Tool processes may outlive the CLI in its group; none may be left behind.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _drain(ours, keepers)
    return ProcessOutcome(proc.returncode, time.monotonic() - started, stopped)


def _wait(
    proc: subprocess.Popen[bytes],
    started: float,
    timeout: float,
    stop: threading.Event | None,
    watch: Callable[[], str | None] | None,
) -> str | None:
    """Poll until the process ends, or name why it was stopped (it is killed then)."""
    while proc.poll() is None:
        stopped: str | None = None
        if time.monotonic() - started > timeout:
            stopped = "timeout"
        elif stop is not None and stop.is_set():
            stopped = "interrupted"
        elif watch is not None:
            stopped = watch()
        if stopped:
            kill_group(proc)
            return stopped
        try:
            proc.wait(timeout=POLL_SECONDS)
        except subprocess.TimeoutExpired:
            pass
    return None


def _drain(ours: list[socket.socket], keepers: list[threading.Thread]) -> None:
    """Wait for the kept files to hold all the process wrote; a process outside the
    group that still holds a stream (one that left its session) is cut off after a grace."""
    for keeper in keepers:
        keeper.join(DRAIN_SECONDS)
    for sock in ours[1:]:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    for keeper in keepers:
        keeper.join()

"""Launching one headless Claude Code process, and never leaving it behind.

The CLI runs in its own session (process group) so a timeout or an interrupt can
kill it together with every tool process it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


def _feed(proc: subprocess.Popen[bytes], prompt: bytes) -> None:
    """Write the prompt and close stdin; a process that ended first simply never reads it."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(prompt)
    except OSError:
        pass
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass


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
) -> ProcessOutcome:
    """Run to completion, timeout or stop; the transcript streams straight into stdout's file.
    `prompt` is written to the process's stdin, which is then closed: a prompt given as an
    argument or in the environment would be readable by every user of the machine for the
    whole run (`ps`, `/proc/<pid>/cmdline`). `watch`, asked at every poll, names a reason
    to stop the run (a turn cap evalkit holds), or None."""
    started = time.monotonic()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if prompt is None else subprocess.PIPE,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        if prompt is not None:
            threading.Thread(
                target=_feed, args=(proc, prompt), name="evalkit-prompt", daemon=True
            ).start()
        stopped: str | None = None
        try:
            while proc.poll() is None:
                if time.monotonic() - started > timeout:
                    stopped = "timeout"
                elif stop is not None and stop.is_set():
                    stopped = "interrupted"
                elif watch is not None:
                    stopped = watch()
                if stopped:
                    kill_group(proc)
                    break
                try:
                    proc.wait(timeout=POLL_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
        except BaseException:
            kill_group(proc)
            raise
        # Tool processes may outlive the CLI in its group; none may be left behind.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return ProcessOutcome(proc.returncode, time.monotonic() - started, stopped)

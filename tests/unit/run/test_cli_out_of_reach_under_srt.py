"""Under srt on Linux, as under bubblewrap, a process the agent starts cannot reach its CLI:
opening `/proc/<cli>/mem`, `ptrace(PTRACE_ATTACH)` and `process_vm_readv` all fail, because
the CLI starts through the launcher (no capability, evalkit's filter, its execute-only copy).
The control starts the same stand-in CLI under srt without the launcher, and the attacker
reaches it. Each test starts srt (about a second of Node), so `make check` leaves them out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.run.backends import seccomp, srt
from evalkit.run.backends.srt_start import Start
from tests.unit.run.test_cli_out_of_reach import (
    ATTACK,
    HOLD,
    REFUSED,
    SYSTEM_PYTHON,
    _seen,
    _stand_in,
)

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.skipif(
        srt.SandboxRuntime().unavailable() is not None or seccomp.program() is None
        or not SYSTEM_PYTHON.is_file(),
        reason="no srt, no system call table or no system Python here",
    ),
]  # fmt: skip


def _under_srt(tmp_path: Path) -> set[str]:
    cli = _stand_in(tmp_path)
    own = tmp_path / "own"
    own.mkdir()
    command = [str(cli), "-c", HOLD.format(attack=ATTACK)]
    wrapped = srt.SandboxRuntime().confine(command, {"PATH": os.environ["PATH"]}, own, [own],
                                           tmp_path / "home", cli, [])  # fmt: skip
    try:
        return _seen(wrapped.command, wrapped.env, wrapped.pass_fds)
    finally:
        wrapped.stop()


def test_under_srt_the_agent_cannot_reach_its_cli(tmp_path: Path) -> None:
    assert _under_srt(tmp_path) >= REFUSED


def test_under_srt_a_cli_started_without_the_launcher_is_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(srt, "_start", lambda cli, env, scratch: Start([str(cli.resolve())],
                                                                       [], False))  # fmt: skip
    assert "reached ptrace" in _under_srt(tmp_path)

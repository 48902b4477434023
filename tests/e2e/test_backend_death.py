"""A SIGKILL of evalkit itself, mid-rep, leaves nothing of the rep running, for each backend:
no process of its sandbox (bubblewrap's, srt's tree) and no container. Nothing of evalkit
runs after a SIGKILL; what cleans up is bubblewrap's --die-with-parent, or the supervisor a
launch runs under (`run/backends/supervise.py`). bubblewrap's runs in `make test`, the others
in `make calibrate-suites`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from evalkit.run.backends import backend
from evalkit.run.backends.container import Engine
from tests.e2e.conftest import Kit

pytestmark = [pytest.mark.e2e]
Process = tuple[int, str]
"""A pid and its start time, so a pid given to a later process is not taken for it."""


def _started(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def _running(process: Process) -> bool:
    try:
        state = Path(f"/proc/{process[0]}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z" and _started(process[0]) == process[1]


def _tree(root: int) -> set[Process]:
    """Every live descendant of `root`."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if (start := _started(child)) is not None:
                found.add((child, start))
                todo.append(child)
    return found


def _argv0(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return ""


def _containers(engine: Engine, kit: Kit) -> dict[str, Process]:
    """The engine's running containers of this kit's reps, by name, with their first
    process."""
    names = ["evalkit-" + p.name.removeprefix("evalkit-") for p in kit.scratch.glob("evalkit-*")]
    found = {}
    for name in names:
        said = subprocess.run([engine.tool() or engine.name, "inspect", "--format",
                               "{{.State.Pid}}", name], capture_output=True, text=True,
                              env={**os.environ, **engine.client_env()})  # fmt: skip
        pid = int(said.stdout.strip() or 0) if said.returncode == 0 else 0
        if pid > 0 and (start := _started(pid)) is not None:
            found[name] = (pid, start)
    return found


@pytest.mark.parametrize(
    "name",
    ["bwrap", *(pytest.param(n, marks=pytest.mark.slow) for n in ("srt", "docker", "podman"))],
)
def test_a_sigkill_of_evalkit_mid_rep_leaves_no_sandboxed_process_or_container(
    kit: Kit, name: str
) -> None:
    chosen = backend(name)
    missing = chosen.unavailable()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    cli = str(Path(kit.cli).resolve())
    work = kit.base / "work"
    proc = kit.start("run", "N1", "policy:fault-hang", str(work), "--timeout", "60",
                     "--confine", name)  # fmt: skip
    engine = chosen if isinstance(chosen, Engine) else None
    deadline, seen = time.monotonic() + 60, set()
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            seen = _tree(proc.pid) | set(_containers(engine, kit).values() if engine else ())
            if any(_argv0(pid) == cli for pid, _ in seen):
                break
            time.sleep(0.1)
        assert any(_argv0(pid) == cli for pid, _ in seen), "the rep's CLI never started"
        time.sleep(0.5)
        seen |= _tree(proc.pid)
    finally:
        proc.kill()
        proc.communicate()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        any(_running(p) for p in seen) or (engine and _containers(engine, kit))
    ):
        time.sleep(0.2)
    assert not [p for p in seen if _running(p)], "a process of the rep outlived evalkit"
    assert not (engine and _containers(engine, kit)), "a container outlived evalkit"

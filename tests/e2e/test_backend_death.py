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

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.scripted_server import ScriptedServer
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


SLEEP = "tail -f /dev/null"
"""The rep's Bash call: it keeps the rep's tree busy on its own, whatever happens to the door
evalkit served (a rep waiting on its API would end by itself once evalkit is gone)."""


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
    engine = chosen if isinstance(chosen, Engine) else None
    step = Step(blocks=[ToolUseBlock(name="Bash", input={"command": SLEEP})])
    with ScriptedServer(Script(steps=[step], final_text="Done.")) as server:
        kit.extra_env.update(ANTHROPIC_BASE_URL=server.base_url, EVALKIT_JUDGE_CMD="echo NO",
                             ANTHROPIC_API_KEY="sk-ant-test-not-a-key")  # fmt: skip
        proc = kit.start("run", "N1", "sonnet", str(kit.base / "work"), "--timeout", "600",
                         "--skip-preflight", "--confine", name)  # fmt: skip
        seen: set[Process] = set()
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and proc.poll() is None and not _sleeping(seen):
                seen |= _tree(proc.pid) | set(_containers(engine, kit).values() if engine else ())
                time.sleep(0.1)
            assert _sleeping(seen), f"the rep's Bash call never started (exit {proc.poll()})"
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


def _sleeping(seen: set[Process]) -> bool:
    """Whether the rep's Bash call runs: its `sleep`, among the rep's processes (in a
    container, any process of the container's: its first one's descendants)."""
    every = set(seen)
    for pid, _ in seen:
        every |= _tree(pid)
    seen |= every
    return any(_cmdline(pid) == SLEEP for pid, _ in every)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""

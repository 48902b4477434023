"""The Task reaches the agent on stdin: no process of the machine shows it on its command line
or in its environment while a rep runs."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Kit, leaked_tasks
from tests.e2e.test_other_agents import require_cli

CLI_FLAGS = {
    "claude": {"--output-format", "-p"},
    "codex": {"exec", "--json"},
    "gemini": {"--output-format", "--skip-trust"},
}
"""What only the agent's CLI process itself carries on its command line."""

pytestmark = pytest.mark.e2e


def assert_no_task_line(scanned: list[tuple[str, str, str]], tasks: list[tuple[str, str]]) -> None:
    """No scanned process's argv or environment holds a Task line; only ids and names said."""
    showing = [f"{pid} {name}" for pid, name, text in scanned if leaked_tasks(text, tasks)]
    assert showing == [], f"processes whose argv or environment hold a Task line: {showing}"


def wait_until_held(proc: subprocess.Popen[str], held: Path) -> None:
    """Until the scripted server holds its answer (the file it touches then), evalkit still
    running, for at most a minute."""
    deadline = time.monotonic() + 60
    while not held.exists():
        assert proc.poll() is None, "evalkit ended before the server held an answer"
        assert time.monotonic() < deadline, "the server never held an answer"
        time.sleep(0.05)


def _family(root: int) -> set[str]:
    """root and every process descending from it (the machine is shared: other people's
    processes are theirs to answer for)."""
    parents: dict[str, str] = {}
    for entry in Path("/proc").iterdir():
        try:
            parents[entry.name] = (entry / "stat").read_text().rpartition(")")[2].split()[1]
        except (OSError, IndexError):
            continue
    family = {str(root)}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in family and pid not in family:
                family.add(pid)
                grew = True
    return family


def _process_texts(pids: set[str]) -> list[tuple[str, str, str]]:
    """(pid, name, cmdline + environ) of each of pids that can be read."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name not in pids:
            continue
        try:
            name = (entry / "comm").read_text().strip()
            argv = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        text = (argv + b"\0" + environ).replace(b"\0", b"\n").decode(errors="replace")
        found.append((entry.name, name, text))
    return found


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_no_process_shows_a_task_line_while_the_agent_waits_for_its_first_answer(
    agent: str, kit: Kit, tasks: list[tuple[str, str]]
) -> None:
    require_cli(agent)
    held = kit.tmp / "held"
    kit.extra_env["EVALKIT_SCRIPTED_HELD"] = str(held)
    work = kit.base / "work"
    proc = kit.start(
        "run", "N1", "policy:fault-hang", str(work), "--timeout", "90", "--agent", agent
    )
    try:
        wait_until_held(proc, held)
        family = _family(proc.pid)
        agents = [a for a in kit.agents() if str(a.pid) in family]
        assert any(CLI_FLAGS[agent] <= set(a.argv) for a in agents), (
            "no CLI process alive while the answer is held"
        )
        scanned = _process_texts(family)
        assert len(scanned) >= 3, f"only {len(scanned)} processes of the rep could be read"
        assert_no_task_line(scanned, tasks)
    finally:
        proc.kill()
        proc.communicate()
        kit.leftovers(grace=5)

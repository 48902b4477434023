"""Inside a confined rep, with no world (the caller's own user, root under CI) and in its
world (the world's mapped user), a process the agent starts cannot reach its CLI: opening
`/proc/<cli>/mem`, `ptrace(PTRACE_ATTACH)` and `process_vm_readv` all fail. The stand-in CLI
is a native program (a copy of the system's Python) that starts the attacker and waits."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.models import WorldConfig
from evalkit.run.backends import exec_only, seccomp
from evalkit.run.backends.confine import confine, unavailable
from evalkit.run.world import lay_out_home, rep_places

needs_bwrap = pytest.mark.skipif(
    unavailable() is not None or not Path("/usr/bin/python3").is_file(),
    reason="no confinement or no system Python here",
)

ATTACK = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
cli = int(sys.argv[1])
try:
    open('/proc/%d/mem' % cli, 'rb').close()
    print('reached mem')
except OSError:
    print('refused mem')
if libc.ptrace(16, cli, 0, 0) == 0:
    print('reached ptrace')
    libc.ptrace(17, cli, 0, 0)
    os.kill(cli, 18)
else:
    print('refused ptrace')
print('reached vm_readv' if libc.syscall(310, cli, 0, 0, 0, 0, 0) >= 0 else 'refused vm_readv')
"""

SYSTEM_PYTHON = Path("/usr/bin/python3")
HOLD = (
    "import os, subprocess; "
    "subprocess.run(['/usr/bin/python3', '-c', {attack!r}, str(os.getpid())])"
)


def _stand_in(tmp_path: Path) -> Path:
    real = SYSTEM_PYTHON.resolve()
    cli = tmp_path / "tools" / "cli"
    cli.parent.mkdir()
    shutil.copy2(real, cli)
    return cli


def _seen(wrapped_command: list[str], env: dict[str, str], fds: tuple[int, ...]) -> set[str]:
    done = subprocess.run(wrapped_command, env=env, capture_output=True, text=True,
                          pass_fds=fds, timeout=60, check=False)  # fmt: skip
    return set(done.stdout.splitlines())


REFUSED = {"refused mem", "refused ptrace", "refused vm_readv"}


@needs_bwrap
@pytest.mark.skipif(seccomp.program() is None, reason="no system call table for this machine")
def test_without_a_world_the_agent_cannot_reach_its_cli(tmp_path: Path) -> None:
    cli = _stand_in(tmp_path)
    own = tmp_path / "own"
    own.mkdir()
    command = [str(cli), "-c", HOLD.format(attack=ATTACK)]
    wrapped = confine(command, {"PATH": os.environ["PATH"]}, own, [own], tmp_path / "home", cli,
                      [])  # fmt: skip
    try:
        seen = _seen(wrapped.command, wrapped.env, wrapped.pass_fds)
    finally:
        wrapped.stop()
    assert seen >= REFUSED, sorted(seen)


@needs_bwrap
@pytest.mark.skipif(seccomp.program() is None, reason="no system call table for this machine")
def test_as_the_world_user_the_agent_cannot_reach_its_cli(tmp_path: Path) -> None:
    world = WorldConfig(project="~/src/reportgen", stores={})
    sandbox, scratch = tmp_path / "sandbox", tmp_path
    (sandbox / "project").mkdir(parents=True)
    (scratch / "config").mkdir()
    cli = _stand_in(tmp_path)
    places = rep_places(world, sandbox, ["project"], scratch / "config", scratch / "home", [],
                        {})  # fmt: skip
    lay_out_home(world, scratch / "home")
    command = [str(cli), "-c", HOLD.format(attack=ATTACK)]
    wrapped = confine(command, {"PATH": os.environ["PATH"]}, sandbox / "project",
                      [sandbox / "project", scratch / "config"], scratch / "home", cli, [],
                      places=places)  # fmt: skip
    try:
        seen = _seen(wrapped.command, wrapped.env, wrapped.pass_fds)
    finally:
        wrapped.stop()
    assert seen >= REFUSED, sorted(seen)


def test_the_filter_refuses_another_architectures_table_and_names_each_call() -> None:
    code = seccomp.program("x86_64")
    assert code is not None and len(code) % 8 == 0
    # load arch, its test, load nr, x32 test, one test per call, allow, refuse
    assert len(code) // 8 == 4 + len(seccomp.ARCHES["x86_64"][1]) + 2
    assert seccomp.program("sparc") is None


def test_a_native_cli_is_bound_over_by_an_execute_only_copy(tmp_path: Path) -> None:
    cli = _stand_in(tmp_path)
    ((copy, program),) = exec_only.binds(cli, cli.parent, os.environ["PATH"])
    assert program == str(cli.resolve())
    assert os.stat(copy).st_mode & 0o777 == exec_only.MODE

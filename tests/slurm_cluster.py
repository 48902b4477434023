"""A single-node Slurm, from Debian's slurm-wlm and munge, brought up in a private folder
and torn down again: its own munge key and socket, its own ports, state and logs, no
accounting. The daemons run in the foreground as children of the test, so they end with it.

Whatever cannot start (a package not installed, a daemon that exits, a node that never
becomes idle) fails in one line naming it: a cluster test never skips.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scancel")
INSTALL = "apt-get install -y slurm-wlm munge"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _config(base: Path, munge_socket: Path, cpus: int) -> str:
    host = socket.gethostname().split(".")[0]
    return f"""\
ClusterName=evalkit
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd.pid
SlurmctldLogFile={base}/slurmctld.log
SlurmdLogFile={base}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=evalkit Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def _tail(path: Path) -> str:
    if not path.is_file():
        return "no log"
    lines = path.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else "empty log"


@contextmanager
def single_node_slurm(base: Path, cpus: int = 6) -> Iterator[dict[str, str]]:
    """Up in a few seconds; yields the environment (SLURM_CONF) that Slurm's commands need.
    `cpus` is declared, not counted, so an array's tasks may share a small machine."""
    absent = [p for p in PROGRAMS if shutil.which(p) is None]
    if absent:
        pytest.fail(f"Slurm cannot start: {', '.join(absent)} not installed ({INSTALL})", False)
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    for folder in ("state", "spool", "munge"):
        (base / folder).mkdir(mode=0o700, exist_ok=True)
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    munge_socket = base / "munge" / "munge.socket"
    conf = base / "slurm.conf"
    conf.write_text(_config(base, munge_socket, cpus))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    daemons: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(name: str, command: list[str], log: Path) -> None:
        out = (base / f"{name}.out").open("wb")
        child = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        daemons.append((name, child, log))

    def check() -> None:
        for name, child, log in daemons:
            if child.poll() is not None:
                pytest.fail(
                    f"Slurm cannot start: {name} exited {child.returncode} ({_tail(log)})", False
                )

    try:
        munge_log = base / "munge" / "munged.log"
        start("munged", ["munged", "--force", "--foreground", f"--socket={munge_socket}",
                         f"--key-file={key}", f"--log-file={munge_log}",
                         f"--pid-file={base}/munge/munged.pid",
                         f"--seed-file={base}/munge/munged.seed"], munge_log)  # fmt: skip
        _wait(lambda: munge_socket.exists(), 10, check, "munged never opened its socket")
        start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(conf)], base / "slurmctld.log")
        start("slurmd", ["slurmd", "-D", "-N", "localhost", "-f", str(conf)], base / "slurmd.log")

        def idle() -> bool:
            done = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True,
                                  text=True, timeout=10)  # fmt: skip
            return done.returncode == 0 and done.stdout.strip() == "idle"

        _wait(idle, 30, check, "the node never became idle")
        yield {"SLURM_CONF": str(conf)}
    finally:
        if daemons:
            subprocess.run(["scancel", "--full", "--user=root"], env=env, capture_output=True,
                           timeout=10, check=False)  # fmt: skip
        for _, child, _ in reversed(daemons):
            child.terminate()
        for _, child, _ in reversed(daemons):
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _wait(ready: Callable[[], bool], seconds: float, check: Callable[[], None], why: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        check()
        if ready():
            return
        time.sleep(0.3)
    pytest.fail(f"Slurm cannot start: {why} within {seconds:g} s", False)

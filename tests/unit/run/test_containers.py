"""Docker and Podman as backends: the command line a rep's container is started with, the
image it starts from, the supervisor that removes it when evalkit dies, and what a later
command reaps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.run.backends import backend, image
from evalkit.run.backends.confine import SUPERVISOR
from evalkit.run.backends.container import (
    CONTAINERS_CONF,
    Docker,
    Engine,
    Podman,
    _alive,
    _owner,
)


def _confined(tmp_path: Path, engine: Engine) -> tuple[list[str], Path]:
    scratch, suite = tmp_path / "evalkit-rep-x1", tmp_path / "suite"
    project = scratch / "sandbox" / "project"
    project.mkdir(parents=True)
    suite.mkdir()
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_BASE_URL": "http://127.0.0.1:4321",
           "ANTHROPIC_API_KEY": "sk-ant-not-a-key"}  # fmt: skip
    cli = Path("/bin/true")
    confined = engine.confine(["claude", "-p"], env, project, [scratch / "sandbox"],
                              scratch / "home", cli, [suite])  # fmt: skip
    confined.stop()
    return confined.command, suite


@pytest.mark.parametrize("engine", [Docker(), Podman()], ids=["docker", "podman"])
def test_a_container_has_no_network_a_read_only_root_and_no_capability(
    tmp_path: Path, engine: Engine
) -> None:
    command, _ = _confined(tmp_path, engine)
    run = command[command.index("--") + 1 :]
    assert run[1:4] == ["run", "--rm", "-i"]
    for pair in (["--network", "none"], ["--cap-drop", "ALL"],
                 ["--security-opt", "no-new-privileges"], ["--log-driver", "none"]):  # fmt: skip
        assert any(run[i : i + 2] == pair for i in range(len(run))), pair
    assert "--read-only" in run
    assert ["--name", "evalkit-rep-x1"] == run[run.index("--name") : run.index("--name") + 2]
    assert f"evalkit.owner={_owner(os.getpid())}" in run


@pytest.mark.parametrize("engine", [Docker(), Podman()], ids=["docker", "podman"])
def test_the_suite_is_never_mounted_and_a_key_reaches_the_client_by_name_only(
    tmp_path: Path, engine: Engine
) -> None:
    command, suite = _confined(tmp_path, engine)
    assert not any(str(suite) in arg for arg in command)
    assert "sk-ant-not-a-key" not in " ".join(command)
    assert ["-e", "ANTHROPIC_API_KEY"] in [command[i : i + 2] for i in range(len(command))]
    writable = [a for a in command if a.startswith("type=bind") and "readonly" not in a]
    assert all(str(tmp_path / "evalkit-rep-x1") in a for a in writable), writable


def test_the_container_runs_under_the_supervisor_which_removes_it(tmp_path: Path) -> None:
    command, _ = _confined(tmp_path, Docker())
    assert command[:4] == [sys.executable, "-I", "-S", str(SUPERVISOR)]
    cleanup = command[5 : command.index("--")]
    assert cleanup[1:] == ["rm", "-f", "evalkit-rep-x1"]


def test_the_seccomp_profile_refuses_what_bubblewraps_filter_refuses(tmp_path: Path) -> None:
    command, _ = _confined(tmp_path, Docker())
    named = next(a for a in command if a.startswith("seccomp="))
    profile = json.loads(Path(named.removeprefix("seccomp=")).read_text())
    refused = profile["syscalls"][0]
    assert refused["action"] == "SCMP_ACT_ERRNO" and refused["errnoRet"] == 1
    assert {"ptrace", "process_vm_readv", "process_vm_writev"} <= set(refused["names"])


def test_the_root_image_is_the_same_bytes_for_the_same_inputs_and_tagged_by_them() -> None:
    entries = image.skeleton()
    assert image.tar_of(entries) == image.tar_of(entries)
    other = (*entries, ("opt", ""))
    assert image.tag(entries) != image.tag(other)
    assert image.tag(entries).startswith("localhost/evalkit-root:")


def test_a_system_folder_that_is_a_link_here_is_a_link_in_the_image() -> None:
    entries = dict(image.skeleton())
    for name in ("bin", "lib", "sbin"):
        if os.path.islink(f"/{name}"):
            assert entries[name] == os.readlink(f"/{name}")


def test_podman_reads_the_repos_own_containers_conf_runc_and_cgroupfs() -> None:
    assert Podman().client_env()["CONTAINERS_CONF"] == str(CONTAINERS_CONF)
    text = CONTAINERS_CONF.read_text()
    assert 'runtime = "runc"' in text and 'cgroup_manager = "cgroupfs"' in text
    assert Podman().ulimits() == []  # inherited: the caller's own, never more


def test_docker_is_given_at_most_the_hosts_hard_limits() -> None:
    import resource

    args = Docker().ulimits()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY:
        assert f"nofile={resource.getrlimit(resource.RLIMIT_NOFILE)[0]}:{hard}" in args


def test_a_living_owner_is_kept_and_a_gone_one_is_reaped() -> None:
    assert _alive(_owner(os.getpid()))
    assert not _alive(f"{os.getpid()}:1")  # the same pid, started at another time
    assert not _alive("garbage")


def test_docker_and_podman_are_backends_of_their_own() -> None:
    assert isinstance(backend("docker"), Docker) and isinstance(backend("podman"), Podman)


def test_when_its_parent_dies_the_supervisor_cleans_up_and_kills_its_group(
    tmp_path: Path,
) -> None:
    """A parent that starts the supervisor (as evalkit does: a session of its own) and is
    then killed: the cleanup runs and the supervised command is gone."""
    done, pidfile = tmp_path / "cleaned", tmp_path / "child.pid"
    parent = (
        "import os, subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-I', '-S', {str(SUPERVISOR)!r}, str(os.getpid()),"
        f" 'touch', {str(done)!r}, '--', 'sh', '-c', 'echo $$ > {pidfile}; exec sleep 60'],"
        " start_new_session=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", parent])
    deadline = time.monotonic() + 10
    while not (pidfile.is_file() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(pidfile.read_text())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    while (done.exists() is False or _running(child)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert done.exists(), "the cleanup did not run"
    assert not _running(child), "the supervised command outlived evalkit"


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_second_ending_signal_does_not_stop_the_supervisor_before_it_kills_its_group(
    tmp_path: Path,
) -> None:
    """The parent-death signal can arrive twice (once per exiting thread of a killed
    evalkit); two ending signals at once must still end with the group killed."""
    pidfile = tmp_path / "child.pid"
    supervisor = subprocess.Popen(
        [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), "--", "sh", "-c",
         f"echo $$ > {pidfile}; exec sleep 60"],
        start_new_session=True, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while not (pidfile.is_file() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(pidfile.read_text())
    os.kill(supervisor.pid, signal.SIGTERM)
    os.kill(supervisor.pid, signal.SIGHUP)
    supervisor.wait(timeout=10)
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    running = _running(child)
    if running:
        os.kill(child, signal.SIGKILL)
    assert not running, f"the supervised command {child} outlived its supervisor"

"""Docker and Podman: a rep in a container, through the engine's own command line.

The container keeps the contract bubblewrap keeps (`confine.py`), by the same parts: its
root is the skeleton image of `image.py`, read-only; the system folders, the CLI install
and the runtimes are bind-mounted read-only where they lie, the CLI's programs replaced by
their execute-only copies (`exec_only.py`); the rep's own folders are bound writable (at
their world paths when the agent has a world); `/tmp` is a private tmpfs. The network is
`none`, loopback only, and its one open port is the same socat bridge over a Unix socket,
bound in, to the same door outside (`egress.py`). Every capability is dropped, no process
may gain one, and the system calls bubblewrap's filter refuses are refused by a seccomp
profile of the same list (`seccomp.py`). The environment reaches the engine's client by
name (`-e NAME`), never a value on its command line.

Each container is named and labelled by its rep and its owner (evalkit's pid and start
time), started with `--rm`, and launched under `supervise.py`, which removes it when
evalkit dies; a container whose owner is gone is removed by the next command that
confines with its engine (`reap`). A container still tells its kind: Docker's
`/.dockerenv` and both engines' cgroup paths (`/docker/<id>`, `libpod-<id>`) stay, so the
rows say `world:partial:container`; Podman's `container=podman` is unset before the CLI
starts, and its `/run/.containerenv` is hidden by the private `/run` a read-only root gets.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
from functools import lru_cache
from pathlib import Path

import evalkit.run.backends.image as image
import evalkit.run.backends.owners as owners
from evalkit.models import Reach
from evalkit.run.backends.confine import (
    DEVICES,
    INSIDE_SOCKETS,
    LABELS_SOCKET,
    PRIVATE,
    UNCONFINED_HINT,
    Confined,
    _door,
    _inner,
    _labels_door,
    _read_only,
    _socket_dir,
    _world_binds,
    _world_env,
    cli_install,
    runtimes,
    supervised,
)
from evalkit.run.backends.exec_only import binds as exec_only_binds
from evalkit.run.backends.seccomp import ARCHES
from evalkit.run.telemetry import INSIDE_PORT
from evalkit.run.world import Places

CONTAINERS_CONF = Path(__file__).with_name("containers.conf")
OWNER = "evalkit.owner"
REP = "evalkit.rep"
CLIENT_OWN = ("HOME", "PATH", "TMPDIR", "USER", "LOGNAME", "XDG_RUNTIME_DIR")
"""Variables the engine's client reads for itself: handed to the container by value."""
CLIENT_KEEPS = ("HOME", "PATH", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONFIG",
                "DOCKER_CONTEXT", "CONTAINER_HOST", "CONTAINERS_STORAGE_CONF")  # fmt: skip
"""The caller's variables the engine's client itself needs."""
UNSET_INSIDE = "unset container; "


class Engine:
    """A container engine's command line as a backend; Docker and Podman differ only in
    their tool's name, the fix for a missing piece, and how they are asked."""

    name = ""
    remove: tuple[str, ...] = ("rm", "-f")
    install = ""
    start = ""
    owner_format = ""
    version_format = ""
    partial: tuple[str, ...] = ("container",)
    remaps = True
    labels = True
    proves_here = False

    def tool(self) -> str | None:
        return shutil.which(self.name)

    def client_env(self) -> dict[str, str]:
        """The caller's variables the client needs, and the engine's own settings."""
        return {k: v for k, v in os.environ.items() if k in CLIENT_KEEPS}

    def unavailable(self) -> str | None:
        tool = self.tool()
        if tool is None:
            return f"{self.name} is not on PATH: install it ({self.install}), {UNCONFINED_HINT}"
        if shutil.which("socat") is None:
            return f"socat is not on PATH: install it (apt-get install socat), {UNCONFINED_HINT}"
        said = _ask(tool, "info", self.client_env())
        if said is None or said.startswith("!"):
            why = f" ({said[1:]})" if said else ""
            return f"{self.name} does not answer{why}: {self.start}, {UNCONFINED_HINT}"
        try:
            image.ensure(tool, tuple(sorted(self.client_env().items())))
        except Exception as exc:  # noqa: BLE001 - an engine that cannot import cannot confine
            return f"{self.name} cannot import the root image ({exc}): {UNCONFINED_HINT}"
        return None

    def version(self) -> str:
        tool = self.tool()
        if tool is None:
            return ""
        said = _ask(tool, "version", self.client_env(), self.version_format) or ""
        return "" if said.startswith("!") else said

    def declarations(self) -> dict[str, str]:
        """What the bundle names besides the backend: the image every rep starts from."""
        return {"confinement_image": image.tag()}

    def reap(self) -> list[str]:
        """Remove every container evalkit left whose owner is gone; their names."""
        tool = self.tool()
        if tool is None:
            return []
        env = self.client_env()
        listed = subprocess.run(
            [tool, "ps", "-a", "--filter", f"label={OWNER}", "--format", self.owner_format],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        gone = [name for name, _, owner in (line.partition("\t") for line in
                listed.stdout.splitlines()) if name and not _alive(owner)]  # fmt: skip
        for name in gone:  # one at a time: Podman stops at a name another command removed
            subprocess.run([tool, *self.remove, name], capture_output=True, env=env,
                           timeout=120, check=False)  # fmt: skip
        return gone

    def confine(
        self,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        writable: list[Path],
        home: Path,
        cli: Path,
        hidden: list[Path],
        shown: list[Path] | None = None,
        hosts: set[tuple[str, int]] | None = None,
        places: Places | None = None,
        labels: tuple[str, int] | None = None,
    ) -> Confined:
        tool = self.tool() or self.name
        inner_env, path = dict(env), env.get("PATH", os.environ.get("PATH", ""))
        found = runtimes(path)
        readable, extra = _read_only(env, cli, shown)
        mounts = [(f, f, True) for f in readable if not os.path.islink(f)]
        mounts += [(f, f, True) for f in extra] + [(s, t, True) for s, t in found.binds]
        extra += found.mounted
        home.mkdir(parents=True, exist_ok=True)
        own = [*writable, home]
        binds = [(str(p), str(p)) for p in own] if places is None else _world_binds(places, own)
        mounts += [(mine, there, False) for mine, there in binds]
        sockets = _socket_dir(home)
        (door, bridge), more = _door(env, inner_env, sockets, hosts), _labels_door(labels, sockets)
        inside = INSIDE_SOCKETS if places is None else f"/run/user/{places.world.uid}"
        mounts.append((str(sockets), inside, True))
        inner_env.update(HOME=str(home), TMPDIR="/tmp")
        if found.front:
            inner_env["PATH"] = os.pathsep.join([*found.front, path])
        hidden_paths, cwd_inside, host = [str(p) for p in hidden], str(cwd), socket.gethostname()
        if places is not None:
            inner_env = _world_env(places, inner_env, found.front, path, readable + extra)
            cwd_inside, host = places.project, places.world.hostname
            hidden_paths += list(places.guarded.values())
        mounts += [
            (c, p, True)
            for c, p in exec_only_binds(cli, cli_install(cli), inner_env.get("PATH", path))
        ]
        name = "evalkit-" + home.parent.name.removeprefix("evalkit-")
        user = _user(places)
        handed = _hand_over(own, sockets, user)
        run = self._run_args(tool, name, host, cwd_inside, mounts, inner_env, user)
        run += ["/bin/sh", "-c", UNSET_INSIDE + _inner(inside), "sh", *bridge,
                *(f"{INSIDE_PORT}:{LABELS_SOCKET}" for _ in more), "--",
                str(cli.resolve()), *command[1:]]  # fmt: skip
        wrapped = supervised(run, (tool, *self.remove, name))
        reach = Reach(confined=True, writable=[there for _, there in binds],
                      private=list(PRIVATE), readable=readable + list(DEVICES) + extra,
                      hidden=hidden_paths, partial=list(self.partial))  # fmt: skip
        confined = Confined(wrapped, self._client(inner_env), reach, door, sockets, (), more,
                            handed)
        confined.cleanup = [tool, *self.remove, name]
        return confined

    def ulimits(self) -> list[str]:
        """The host's own limits on open files and processes, never more: Docker's daemon
        would otherwise hand down its own, which may be higher than the host's hard limit."""
        return _ulimits()

    def _client(self, inner: dict[str, str]) -> dict[str, str]:
        """The client's environment: the container's variables, read by name, over what
        the client itself needs."""
        return {**{k: v for k, v in inner.items() if k not in CLIENT_OWN}, **self.client_env()}

    def _run_args(
        self,
        tool: str,
        name: str,
        host: str,
        cwd: str,
        mounts: list[tuple[str, str, bool]],
        inner: dict[str, str],
        user: tuple[int, int],
    ) -> list[str]:
        """`run` with the rep's confinement: its name and labels, no network, a read-only
        root, no capability, the seccomp profile, its user, the host's limits."""
        args = [tool, "run", "--rm", "-i", "--name", name, "--label", f"{REP}={name}",
                "--label", f"{OWNER}={_owner(os.getpid())}", "--log-driver", "none",
                "--network", "none", "--read-only", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges",
                "--security-opt", f"seccomp={seccomp_profile()}",
                "--user", f"{user[0]}:{user[1]}", "--hostname", host,
                "--workdir", cwd, "--tmpfs", "/tmp:rw,exec,nosuid,nodev,mode=1777",
                *self.ulimits()]  # fmt: skip
        for source, there, ro in mounts:
            args += ["--mount", f"type=bind,src={source},dst={there}" + (",readonly" if ro else "")]
        for key, value in inner.items():
            args += ["-e", f"{key}={value}" if key in CLIENT_OWN else key]
        return [*args, image.tag()]


class Docker(Engine):
    name = "docker"
    install = "apt-get install docker.io"
    start = "start its daemon (sudo systemctl start docker, or dockerd &)"
    owner_format = '{{.Names}}\t{{.Label "evalkit.owner"}}'
    version_format = "{{.Server.Version}}"


class Podman(Engine):
    name = "podman"
    remove = ("rm", "-f", "-t", "0")  # no grace: the rep is over
    install = "apt-get install podman runc"
    start = "run `podman info` to see why"
    owner_format = '{{.Names}}\t{{index .Labels "evalkit.owner"}}'
    version_format = "{{.Client.Version}}"

    def ulimits(self) -> list[str]:
        """None named: with no default ulimits in evalkit's containers.conf, Podman hands
        the container its own, the caller's (naming one makes Podman fill in its defaults
        for the others, above the host's hard limits, which runc then cannot set)."""
        return []

    def client_env(self) -> dict[str, str]:
        """Podman reads evalkit's own containers.conf: runc, cgroupfs, no default ulimits."""
        return {**super().client_env(), "CONTAINERS_CONF": str(CONTAINERS_CONF)}


def _ask(tool: str, what: str, env: dict[str, str], fmt: str = "") -> str | None:
    """The engine's answer to `info` or `version` (its one line with a format); when it
    cannot answer (no daemon, no permission), None or `!` and the last line it said."""
    args = [tool, what] + (["--format", fmt] if fmt else [])
    try:
        said = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if said.returncode == 0:
        return said.stdout.strip()
    last = (said.stderr.strip().splitlines() or [""])[-1][:160]
    return f"!{last}" if last else None


def _user(places: Places | None) -> tuple[int, int]:
    """Who the agent is inside: the caller, or, where the caller is root and the agent has a
    world, the world's user (the CLI refuses to skip its permission prompts as root, and the
    world's environment does not say it is a sandbox)."""
    if os.getuid() != 0 or places is None:
        return os.getuid(), os.getgid()
    return places.world.uid, places.world.gid


def _hand_over(own: list[Path], sockets: Path, user: tuple[int, int]) -> tuple[Path, ...]:
    """The rep's own folders given to the user it runs as, and its doors' sockets opened to
    it (they sit in a folder of the rep's that nothing else is shown); returned, to be handed
    back to the caller once the agent is gone (`Confined.hand_back`), as bubblewrap's are."""
    for door in sockets.iterdir():
        os.chmod(door, 0o666)
    if user == (os.getuid(), os.getgid()):
        return ()
    os.lchown(sockets, *user)  # a short folder in /tmp is private to its maker
    owners.hand_over(own, *user)
    return (*own, sockets)


def _ulimits() -> list[str]:
    """The host's own limits on open files and processes, never more (an engine's default
    can be higher than the host's hard limit)."""
    args = []
    for name, limit in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC)):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            soft = hard if soft == resource.RLIM_INFINITY else soft
            args += ["--ulimit", f"{name}={soft}:{hard}"]
    return args


def _owner(pid: int) -> str:
    """A process named so that a later one given the same pid is not taken for it: its pid
    and its start time since boot."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return f"{pid}:"
    return f"{pid}:{stat.rpartition(')')[2].split()[19]}"


def _alive(owner: str) -> bool:
    pid, _, _start = owner.partition(":")
    return pid.isdigit() and _owner(int(pid)) == owner


@lru_cache(maxsize=1)
def seccomp_profile() -> str:
    """A seccomp profile refusing (EPERM) what bubblewrap's filter refuses, written once per
    machine beside the execute-only copies; its path."""
    names = sorted({n for _, table in ARCHES.values() for n in table})
    refused = {"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": 1}
    profile = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [refused]}
    text = json.dumps(profile, indent=1, sort_keys=True) + "\n"
    from evalkit.run.backends.exec_only import _store

    target = _store() / "seccomp-refuse.json"
    if not target.is_file() or target.read_text() != text:
        partial = target.with_name(f".{target.name}.{os.getpid()}")
        partial.write_text(text)
        os.replace(partial, target)
    return str(target)

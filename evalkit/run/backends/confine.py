"""Every rep's agent runs in an OS sandbox: it reaches its own rep and nothing else.

On Linux the whole process tree of the agent (the CLI, its hooks, Bash, plugin tools, MCP
servers) runs under bubblewrap. A whitelist, not a blacklist: the sandbox's root is empty,
and only these are mounted into it:

- writable: the rep's own folders (the project and side stores, the per-rep config dir,
  plugin copies and HOME) and a private ``/tmp``;
- read-only: the system folders, the resolved CLI install and the language runtimes the
  fixture's tools start (the real interpreter behind a version manager's shim included),
  and for Bedrock/Vertex the credential files;

so the suite folder, the results folder, other reps' scratch, the user's HOME and every
guarded path are absent. The network is a namespace of its own with loopback only; its one
open port is a socat bridge over a Unix socket (bind-mounted in) to a door outside
(`egress.py`): a forwarder to this rep's scripted server or an ``http://``
``ANTHROPIC_BASE_URL``'s host, else the allow-listing CONNECT proxy for the https API
host(s). Proxy variables alone confine nothing: Bash and python3 ignore them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import evalkit.run.backends.owners as owners
from evalkit.errors import PrerequisiteError
from evalkit.models import Reach
from evalkit.run.backends.egress import ConnectProxy, Forwarder, anthropic_hosts
from evalkit.run.backends.exec_only import binds as exec_only_binds
from evalkit.run.backends.launchers import interpreter, shared_libraries
from evalkit.run.backends.seccomp import filter_fd
from evalkit.run.telemetry import INSIDE_PORT
from evalkit.run.world import Places, world_env

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
PRIVATE = ("/tmp",)
DEVICES = ("/dev", "/proc")
"""Mounted fresh inside (a minimal /dev, the sandbox's own /proc): read as system folders."""
RUNTIMES = ("python3", "node", "ruby")
CREDENTIAL_FILES = ("GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE",
                    "AWS_CONFIG_FILE", "NODE_EXTRA_CA_CERTS")  # fmt: skip
"""Files the CLI reads to reach its API (Bedrock's and Vertex's credentials, a gateway's CA),
mounted read-only."""
INSIDE_SOCKETS = "/run/evalkit"
SOCKET = "api.sock"
PROXY_SOCKET = "proxy.sock"
LABELS_SOCKET = "otlp.sock"
PROXY_PORT = 3128
MAX_SOCKET_PATH = 100
UNCONFINED_HINT = "or pass --unconfined to run anyway (rows are then flagged unconfined)"


def unavailable() -> str | None:
    """Why no rep can be confined on this machine, naming the fix; None when it can."""
    return _unavailable(os.environ.get("PATH", ""))


@lru_cache(maxsize=4)
def _unavailable(path: str) -> str | None:
    if sys.platform != "linux":
        return f"nothing confines a rep on {sys.platform} yet: {UNCONFINED_HINT}"
    bwrap, socat = shutil.which("bwrap", path=path), shutil.which("socat", path=path)
    if bwrap is None:
        return (
            "bubblewrap (bwrap) is not on PATH: install it (apt-get install bubblewrap), "
            + UNCONFINED_HINT
        )
    if socat is None:
        return f"socat is not on PATH: install it (apt-get install socat), {UNCONFINED_HINT}"
    probe = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
             "--proc", "/proc", "--tmpfs", "/tmp", "true"]  # fmt: skip
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot start ({type(exc).__name__}): {UNCONFINED_HINT}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1][:160]
        return (
            f"bwrap cannot make a sandbox here ({said}): allow unprivileged user namespaces "
            f"(sysctl kernel.unprivileged_userns_clone=1), {UNCONFINED_HINT}"
        )
    return None


def require_confinement() -> None:
    """Refuse, before anything is planned, where a rep cannot be confined."""
    why = unavailable()
    if why is not None:
        raise PrerequisiteError(f"reps run confined by default, and {why}")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def cli_install(cli: Path) -> Path:
    """The folder the CLI runs from: above its topmost node_modules, else its own folder."""
    real = cli.resolve()
    tops = [p for p in real.parents if p.name == "node_modules"]
    return tops[-1].parent if tops else real.parent


@dataclass(frozen=True)
class Runtimes:
    """The runtimes on a PATH that live outside the system folders, as the sandbox mounts
    them: each real interpreter as a file of its own (and under the name PATH found it by),
    its shared libraries as files, and its own library folders; never a folder that holds
    anything else, such as the user's bin/ a wrapper sits in."""

    binds: tuple[tuple[str, str], ...] = ()
    """(source, path inside), read-only."""
    front: tuple[str, ...] = ()
    """Folders put first on PATH inside: each interpreter's own, holding only it."""

    @property
    def mounted(self) -> list[str]:
        return list(dict.fromkeys(inside for _, inside in self.binds))


@lru_cache(maxsize=8)
def runtimes(path: str) -> Runtimes:
    """The interpreters `path` finds first, each resolved to what it really runs (a
    wrapper's or version manager's choice included) when it lies outside the system
    folders; a wrapper whose interpreter is a system one mounts nothing."""
    system = [Path(s) for s in SYSTEM]
    binds: list[tuple[str, str]] = []
    front: list[str] = []
    for name in RUNTIMES:
        found = shutil.which(name, path=path)
        if found is None or any(_inside(Path(found).resolve(), s) for s in system):
            continue
        ask_env = {"PATH": path, "HOME": os.environ.get("HOME", "/")}
        real = interpreter(name, found, ask_env)
        if real is None or any(_inside(real.executable, s) for s in system):
            continue
        exe = real.executable
        binds += [(str(exe), str(exe)), (str(exe), str(exe.parent / name))]
        binds += [(str(src), str(at)) for src, at in shared_libraries(exe)
                  if not any(_inside(src, s) for s in system)]  # fmt: skip
        binds += [(str(folder), str(folder)) for folder in real.libraries]
        if exe.parent != Path(found).parent:
            front.append(str(exe.parent))
    return Runtimes(tuple(dict.fromkeys(binds)), tuple(dict.fromkeys(front)))


def api_target(env: dict[str, str]) -> tuple[str, int, str] | None:
    """(host, port, the base URL the CLI is given inside) for an http:// ANTHROPIC_BASE_URL;
    None when the API is reached otherwise (https, Bedrock, Vertex, the default host)."""
    base = env.get("ANTHROPIC_BASE_URL", "")
    parts = urlsplit(base)
    if parts.scheme != "http" or not parts.hostname:
        return None
    port = parts.port or 80
    inside = urlunsplit(("http", f"127.0.0.1:{port}", parts.path, parts.query, ""))
    return parts.hostname, port, inside


def require_reachable_api(env: dict[str, str], policy: bool) -> None:
    """A confined real-model rep reaches its API through a forwarder (http) or the CONNECT
    proxy (https); an ANTHROPIC_BASE_URL of any other kind is refused up front."""
    if policy or api_target(env) is not None or anthropic_hosts(env):
        return
    raise PrerequisiteError(
        f"ANTHROPIC_BASE_URL={env.get('ANTHROPIC_BASE_URL', '')!r} is neither http:// nor "
        f"https://, so a confined rep cannot reach it; fix it, {UNCONFINED_HINT}"
    )


@dataclass
class Confined:
    """A command wrapped for its sandbox, and the door outside that serves its one port."""

    command: list[str]
    env: dict[str, str]
    reach: Reach
    door: Forwarder | ConnectProxy | None = None
    sockets: Path | None = None
    pass_fds: tuple[int, ...] = ()
    """Descriptors the wrapper reads at its start (bubblewrap's seccomp filter): the launch
    hands them on, and `stop` closes them."""
    more_doors: tuple[Forwarder, ...] = ()
    """Further doors of its own (its telemetry receiver's), each to one host address."""
    handed: tuple[Path, ...] = ()
    """The rep's folders the world's user owns for its run (`owners.py`)."""
    cleanup: list[str] | None = None
    """A command that removes what outlives the wrapper (a rep's container), run at `stop`."""

    def hand_back(self) -> None:
        """Once the agent is gone: the rep's folders are the caller's again, as evalkit
        (and git, which refuses a repository another user owns) reads them."""
        owners.hand_over(list(self.handed), os.getuid(), os.getgid())
        self.handed = ()

    def stop(self) -> None:
        if self.cleanup:
            try:
                subprocess.run(self.cleanup, capture_output=True, timeout=60, check=False)
            except (OSError, subprocess.SubprocessError):
                pass
            self.cleanup = None
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.pass_fds = ()
        for door in (self.door, *self.more_doors):
            if door is not None:
                door.stop()
        if self.sockets is not None:
            shutil.rmtree(self.sockets, ignore_errors=True)


def _socket_dir(near: Path) -> Path:
    """A folder for the doors' sockets beside `near` (the rep's own, removed with it), or in
    /tmp where that path is too long for a Unix socket (about 100 bytes)."""
    here = near.parent / "net"
    if len(str(here / PROXY_SOCKET)) < MAX_SOCKET_PATH:
        here.mkdir(exist_ok=True)
        return here
    base = "/tmp" if os.access("/tmp", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="evalkit-net-", dir=base))


def _inner(sockets: str) -> str:
    """Inside the sandbox: each `port:socket` bridge, up before the CLI starts, then the
    CLI."""
    return (
        'while [ "$1" != -- ]; do port="${1%%:*}"; name="${1#*:}"; shift; '
        'socat "TCP-LISTEN:$port,bind=127.0.0.1,fork,reuseaddr" '
        f'"UNIX-CONNECT:{sockets}/$name" </dev/null >/dev/null 2>&1 & '
        'hex=$(printf "%04X" "$port"); i=0; '
        'while ! grep -q ":$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null && [ $i -lt 1000 ]; '
        "do sleep 0.005; i=$((i+1)); done; done; shift; "
        'exec "$@"'
    )


INNER = _inner(INSIDE_SOCKETS)


def confine(
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
    """`command` wrapped to run in its sandbox, with what it may reach recorded; `home` is
    the rep's own HOME, and the doors' sockets go beside it. `shown` are files of the rep's
    own that its processes may read but not write (the transcript, which an observed
    script's wrapper counts the lines of). With `places`, the agent lives in its world:
    each rep folder bound at its world path, as the world's user, on the world's host;
    with `labels`, a second bridge reaches the rep's telemetry receiver and nothing else."""
    bwrap = shutil.which("bwrap") or "bwrap"
    inner_env = dict(env)
    path = env.get("PATH", os.environ.get("PATH", ""))
    found = runtimes(path)
    front = found.front
    readable, extra = _read_only(env, cli, shown)
    seccomp, userns = filter_fd(), _userns(places)
    args = [bwrap, *_unshared(seccomp, userns), *_system_mounts(readable, extra, found.binds)]
    extra += found.mounted
    home.mkdir(parents=True, exist_ok=True)
    own = [*writable, home]
    binds = [(str(p), str(p)) for p in own] if places is None else _world_binds(places, own)
    for mine, there in binds:
        args += ["--bind", mine, there]
    sockets = _socket_dir(home)
    (door, bridge), more = _door(env, inner_env, sockets, hosts), _labels_door(labels, sockets)
    inside = INSIDE_SOCKETS if places is None else f"/run/user/{places.world.uid}"
    args += ["--ro-bind", str(sockets), inside]
    inner_env.update(HOME=str(home), TMPDIR="/tmp")
    if front:
        inner_env["PATH"] = os.pathsep.join([*front, path])
    hidden_paths = [str(p) for p in hidden]
    if places is not None:
        inner_env = _world_env(places, inner_env, front, path, readable + extra)
        args += _world_identity(places, userns is not None, home.parent / "identity")
        cwd_inside, hidden_paths = places.project, hidden_paths + list(places.guarded.values())
    else:
        cwd_inside = str(cwd)
    handed = _hand_over(places, own, sockets) if places and userns is not None else ()
    args += _exec_only(cli, inner_env.get("PATH", path))
    args += [*_opened(args, handed), "--remount-ro", "/", "--chdir", cwd_inside, "--",
             *(owners.become(places.world) if places and handed else []),
             "/bin/sh", "-c", _inner(inside), "sh", *bridge,
             *(f"{INSIDE_PORT}:{LABELS_SOCKET}" for _ in more),
             "--", str(cli.resolve()), *command[1:]]  # fmt: skip
    reach = Reach(confined=True, writable=[there for _, there in binds], private=list(PRIVATE),
                  readable=readable + list(DEVICES) + extra, hidden=hidden_paths)  # fmt: skip
    fds = tuple(fd for fd in (seccomp, userns) if fd is not None)
    return Confined(supervised(args) if handed else args, inner_env, reach, door, sockets, fds,
                    more, handed)  # fmt: skip


SUPERVISOR = Path(__file__).with_name("supervise.py")


def supervised(command: list[str], cleanup: tuple[str, ...] = ()) -> list[str]:
    """`command` run under the supervisor (`supervise.py`), which runs `cleanup` and kills its
    process group when evalkit dies: every backend's launch but plain bubblewrap's.
    Bubblewrap's own `--die-with-parent` does not reach an agent that `setpriv` made the
    world's user (measured: the CLI and its Bash call outlived a SIGKILL of evalkit)."""
    return [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), *cleanup, "--",
            *command]  # fmt: skip


def _read_only(
    env: dict[str, str], cli: Path, shown: list[Path] | None
) -> tuple[list[str], list[str]]:
    """The system folders there are, and the further read-only mounts: the CLI install,
    credential files the environment names, and the rep's shown files."""
    readable = [s for s in SYSTEM if os.path.lexists(s)]
    extra = [str(cli_install(cli))]
    extra += [env[k] for k in CREDENTIAL_FILES if env.get(k) and os.path.isfile(env[k])]
    return readable, extra + [str(p) for p in shown or []]


def _unshared(seccomp: int | None, userns: int | None = None) -> list[str]:
    """Every namespace of its own, no capability left (none would override what the agent
    may not read or trace), and the system call filter where this machine has one. With
    `userns`, the user namespace evalkit made is joined, and its root keeps what `setpriv`
    needs to become the world's user (`owners.py`), who then has none."""
    args = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    if userns is not None:
        args = [*owners.NAMESPACES, "--userns", str(userns), *args[1:]]
        args += [arg for cap in owners.CAPS for arg in ("--cap-add", cap)]
    return args + (["--seccomp", str(seccomp)] if seccomp is not None else [])


def _userns(places: Places | None) -> int | None:
    """The two-range user namespace of a rep with a world, where evalkit can make one."""
    if places is None or not owners.available():
        return None
    return owners.user_namespace(places.world.uid, places.world.gid)


def _hand_over(places: Places, own: list[Path], sockets: Path) -> tuple[Path, ...]:
    """The rep's folders handed to the world's user for its run (the mount points of the
    places inside another made first, so that bubblewrap need not make them as root), and
    the doors' sockets it connects to; returned, to be handed back after."""
    for host, world, _ in places.binds:
        for outer, outer_world, _ in places.binds:
            if world.startswith(outer_world.rstrip("/") + "/"):
                point = outer / world[len(outer_world) :].lstrip("/")
                if host.is_dir():
                    point.mkdir(parents=True, exist_ok=True)
                else:  # a file's mount point is a file (the hooks' recorder and log)
                    point.parent.mkdir(parents=True, exist_ok=True)
                    point.touch()
    folders = tuple(dict.fromkeys([*(h for h, _, _ in places.binds), *own, sockets]))
    owners.hand_over(list(folders), places.world.uid, places.world.gid)
    return folders


def _opened(args: list[str], handed: tuple[Path, ...]) -> list[str]:
    """With ownership, each folder bubblewrap made for a mount point opened to the world's
    user (it makes them root's, 0700)."""
    if not handed:
        return []
    return [arg for made in owners.made_dirs(args) for arg in ("--chmod", "0755", made)]


def _exec_only(cli: Path, path: str) -> list[str]:
    """The execute-only copies bound over what the CLI runs from (`exec_only.py`)."""
    args = []
    for copy, program in exec_only_binds(cli, cli_install(cli), path):
        args += ["--ro-bind", copy, program]
    return args


def _system_mounts(
    readable: list[str], extra: list[str], binds: tuple[tuple[str, str], ...] = ()
) -> list[str]:
    """The system folders (a link among them made again as a link), a fresh /dev, /proc
    and /tmp, the further read-only folders, and the runtimes' files at their paths."""
    args = []
    for folder in readable:
        link = os.readlink(folder) if os.path.islink(folder) else None
        args += ["--symlink", link, folder] if link else ["--ro-bind", folder, folder]
    args += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
    for folder in extra:
        args += ["--ro-bind", folder, folder]
    for source, there in binds:
        args += ["--ro-bind", source, there]
    return args


def _world_binds(places: Places, own: list[Path]) -> list[tuple[str, str]]:
    """Each rep folder at its world path (HOME first, then what sits inside it), and any
    other folder of the rep's own where it is."""
    placed = {host for host, _, _ in places.binds}
    binds = [(str(host), world) for host, world, _ in places.binds]
    holders = {p for p in own for host in placed if p in host.parents}
    return binds + [(str(p), str(p)) for p in own if p not in placed | holders]


def _world_identity(places: Places, owned: bool, folder: Path) -> list[str]:
    """The world's user and host: the user namespace evalkit made (`owned`: root is root,
    the user is the user), else bubblewrap's, in which the agent is the world's uid and gid
    (the caller's files appear as the user's own); `/etc/passwd` and `/etc/group` naming
    the user; its hostname; no bwrap reaper as PID 1, whose argv would name every mount
    (the launcher execs the CLI, which becomes PID 1)."""
    world = places.world
    user = [] if owned else ["--unshare-user", "--uid", str(world.uid), "--gid", str(world.gid)]
    return [*user, *owners.identity(world, folder), "--hostname", world.hostname, "--as-pid-1"]


def _world_env(
    places: Places, env: dict[str, str], front: tuple[str, ...], path: str, mounted: list[str]
) -> dict[str, str]:
    """The environment in the world, its PATH the runtimes' folders and those of the
    caller's PATH that exist inside (the system's and the mounted runtimes')."""
    roots = [Path(m) for m in mounted]
    kept = [p for p in path.split(os.pathsep) if p and any(_inside(Path(p), r) for r in roots)]
    return world_env(places.world, env, list(places.guarded), [*front, *kept])


def _door(
    env: dict[str, str],
    inner_env: dict[str, str],
    sockets: Path,
    hosts: set[tuple[str, int]] | None = None,
) -> tuple[Forwarder | ConnectProxy | None, list[str]]:
    """The rep's one door out, started, and the `port:socket` bridge inside that reaches it:
    a forwarder to an http:// ANTHROPIC_BASE_URL's host and port (a policy's scripted server
    included), else the CONNECT proxy for the https API host(s), named by HTTPS_PROXY."""
    target = api_target(env)
    if target is not None:
        host, port, inside = target
        forwarder = Forwarder(sockets / SOCKET, (host, port))
        forwarder.start()
        inner_env["ANTHROPIC_BASE_URL"] = inside
        return forwarder, [f"{port}:{SOCKET}"]
    allowed = anthropic_hosts(env) if hosts is None else hosts
    if not allowed:
        return None, []
    proxy = ConnectProxy(sockets / PROXY_SOCKET, allowed)
    proxy.start()
    url = f"http://127.0.0.1:{PROXY_PORT}"
    for name in ("HTTPS_PROXY", "https_proxy"):
        inner_env[name] = url
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy"):
        inner_env.pop(name, None)
    return proxy, [f"{PROXY_PORT}:{PROXY_SOCKET}"]


def _labels_door(labels: tuple[str, int] | None, sockets: Path) -> tuple[Forwarder, ...]:
    """The door to the rep's telemetry receiver, started (the bridge at the OTLP port inside
    reaches it); none without one."""
    if labels is None:
        return ()
    door = Forwarder(sockets / LABELS_SOCKET, labels)
    door.start()
    return (door,)


def unconfined_reach(writable: list[Path], hidden: list[Path]) -> Reach:
    """What an unconfined rep was meant to keep to, for naming its escapes all the same."""
    return Reach(
        confined=False,
        writable=[str(p) for p in writable],
        readable=[s for s in SYSTEM if os.path.lexists(s)] + list(DEVICES),
        hidden=[str(p) for p in hidden],
    )

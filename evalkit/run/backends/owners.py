"""Ownership as on a user's machine: inside the world, the system's files are root's, and the
home and project are the world user's, who is the one running everything there.

bubblewrap's own user namespace maps one user (the agent's uid to the caller's), so every
file shows as the agent's or as `nobody`, never as root's. Where evalkit runs as root it
builds the namespace itself instead, with two ranges that it writes to the namespace's
`uid_map` and `gid_map`: 0 to 0, and the world's uid and gid to the same numbers on the host
(they cannot map to the caller's too: the kernel refuses two ranges that overlap outside).
bubblewrap joins it (`--userns`) and mounts as its root; `setpriv` then becomes the world's
user, every capability and the bounding set dropped, and execs the launcher, so the process
table shows no trace of it. The rep's own folders are handed to that user for the run and
back to the caller after it (git, run by evalkit later, refuses a repository another user
owns).

bubblewrap 0.8's `--userns` with `--uid` cannot do it alone: it changes the uid before the
gid (the gid change then fails) and before it mounts (which then fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

from evalkit.models import WorldConfig

CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What bubblewrap leaves its command, for `setpriv` to become the world's user with; all
gone once it has."""
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
              "--unshare-cgroup-try")  # fmt: skip
"""`--unshare-all` less the user namespace, which is joined (bubblewrap refuses both)."""
SETTLE_SECONDS = 5.0


def available() -> bool:
    """Whether reps here get two-range ownership: evalkit is root on Linux, `unshare` and
    `setpriv` (util-linux) are on PATH, and a namespace can be made with both ranges."""
    return _available(os.environ.get("PATH", ""))


@lru_cache(maxsize=4)
def _available(path: str) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    if not all(shutil.which(tool, path=path) for tool in ("unshare", "setpriv")):
        return False
    try:
        os.close(user_namespace(1000, 1000))
    except OSError:
        return False
    return True


def user_namespace(uid: int, gid: int) -> int:
    """A descriptor of a new user namespace mapping 0 to 0 and `uid`/`gid` to themselves:
    a helper enters it, evalkit writes its maps and keeps it open, and the helper exits."""
    helper = subprocess.Popen(["unshare", "--user", "--", "cat"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _entered(helper.pid)
        for name, number in (("uid_map", uid), ("gid_map", gid)):
            with open(f"/proc/{helper.pid}/{name}", "w", encoding="ascii") as out:
                out.write(f"0 0 1\n{number} {number} 1\n")
        return os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        assert helper.stdin is not None
        helper.stdin.close()
        try:
            helper.wait(timeout=SETTLE_SECONDS)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()


def _entered(pid: int) -> None:
    """Wait until the helper is in a user namespace other than evalkit's."""
    mine = os.readlink("/proc/self/ns/user")
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        if os.readlink(f"/proc/{pid}/ns/user") != mine:
            return
        time.sleep(0.002)
    raise OSError(f"the namespace helper {pid} did not unshare")


def become(world: WorldConfig) -> list[str]:
    """The command prefix that turns bubblewrap's root into the world's user. The kernel
    clears a process's parent-death signal when its uid changes, which would let the agent
    outlive a killed evalkit (bubblewrap's `--die-with-parent` set it before the change, and
    its own switch into the joined namespace may already clear it): `--pdeathsig SIGKILL`
    sets it again after the change, so the agent dies with bubblewrap."""
    return ["setpriv", "--reuid", str(world.uid), "--regid", str(world.gid), "--clear-groups",
            "--bounding-set", "-all", "--inh-caps", "-all", "--pdeathsig", "SIGKILL",
            "--"]  # fmt: skip


def hand_over(folders: list[Path], uid: int, gid: int) -> None:
    """Every file and folder under `folders` owned by uid:gid, no link followed."""
    for folder in folders:
        if not folder.exists():
            continue
        os.chown(folder, uid, gid, follow_symlinks=False)
        for root, dirs, files in os.walk(folder):
            for name in dirs + files:
                os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def identity(world: WorldConfig, folder: Path) -> list[str]:
    """`/etc/passwd` and `/etc/group` as the world's machine has them (the host's entries,
    with the world's user in place of any of its name or number), written into `folder` and
    mounted over the host's, so `id` and `ls -l` name the world's user."""
    folder.mkdir(parents=True, exist_ok=True)
    user = f"{world.user}:x:{world.uid}:{world.gid}:{world.full_name}:{world.home}:/bin/bash"
    group = f"{world.user}:x:{world.gid}:"
    args = []
    for name, own, number in (("passwd", user, world.uid), ("group", group, world.gid)):
        try:
            lines = Path(f"/etc/{name}").read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        kept = [line for line in lines if not _theirs(line, world.user, number)]
        (folder / name).write_text("\n".join([*kept, own]) + "\n", encoding="utf-8")
        args += ["--ro-bind", str(folder / name), f"/etc/{name}"]
    return args


def _theirs(line: str, name: str, number: int) -> bool:
    fields = line.split(":")
    return fields[0] == name or (len(fields) > 2 and fields[2] == str(number))


def made_dirs(args: list[str]) -> list[str]:
    """The folders bubblewrap makes on its own for `args`' mounts (each missing parent of a
    mount point in its fresh root or a tmpfs; mode 0700, owned by root inside): the world's
    user must pass through them, so they are opened (0755) once mounted."""
    two = {"--bind", "--ro-bind", "--symlink", "--bind-try", "--ro-bind-try", "--dev-bind"}
    one = {"--dev", "--proc", "--tmpfs", "--dir"}
    points, hosts, index = [], set(), 0
    while index < len(args):
        op = args[index]
        if op in two and index + 2 < len(args):
            points.append(args[index + 2])
            if op != "--symlink":
                hosts.add(args[index + 2])
            index += 3
        elif op in one and index + 1 < len(args):
            points.append(args[index + 1])
            index += 2
        else:
            index += 1
    made: dict[str, None] = {}
    for point in points:
        for parent in reversed(Path(point).parents):
            text = str(parent)
            if text in points or text == "/":
                continue
            if any(text.startswith(host.rstrip("/") + "/") for host in hosts):
                break  # a folder of the host's, already there
            made.setdefault(text, None)
    return list(made)

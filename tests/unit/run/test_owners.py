"""Ownership as on a user's machine: the folders bubblewrap makes itself are the ones opened to
the world's user, and the world's `/etc/passwd` and `/etc/group` name that user alone at its
numbers. (The namespace itself, `id` and `ls -ln` are read through the real CLI in
`tests/e2e/test_world_recon.py`.)"""

from __future__ import annotations

from pathlib import Path

from evalkit.models import WorldConfig
from evalkit.run.backends.owners import identity, made_dirs


def test_only_the_folders_bubblewrap_makes_for_mount_points_are_opened() -> None:
    args = [
        "--ro-bind", "/usr", "/usr", "--perms", "1777", "--tmpfs", "/tmp",
        "--bind", "/s/home", "/home/alex", "--bind", "/s/project", "/home/alex/src/app",
        "--ro-bind", "/s/net", "/run/user/1000", "--bind", "/tmp/x/obs", "/tmp/x/obs",
        "--ro-bind", "/opt/cli", "/work/tools/cli",
        "--ro-bind", "/copy", "/work/tools/cli/bin/claude",
    ]  # fmt: skip
    assert made_dirs(args) == ["/home", "/run", "/run/user", "/tmp/x", "/work", "/work/tools"]


def test_the_worlds_user_alone_holds_its_name_and_numbers(tmp_path: Path) -> None:
    world = WorldConfig()
    args = identity(world, tmp_path / "identity")
    passwd = (tmp_path / "identity" / "passwd").read_text(encoding="utf-8").splitlines()
    group = (tmp_path / "identity" / "group").read_text(encoding="utf-8").splitlines()
    holders = [line for line in passwd if line.split(":")[0] == world.user
               or line.split(":")[2] == str(world.uid)]  # fmt: skip
    assert holders == [f"alex:x:{world.uid}:{world.gid}:Alex Morgan:/home/alex:/bin/bash"]
    assert [line for line in group if line.split(":")[2] == str(world.gid)] == [
        f"alex:x:{world.gid}:"
    ]
    assert args[args.index("/etc/passwd") - 1] == str(tmp_path / "identity" / "passwd")
    assert args[args.index("/etc/group") - 1] == str(tmp_path / "identity" / "group")

"""The root file system a rep's container starts from: built offline, once per machine.

The image holds only the skeleton of a root: the folders a container needs to mount on, and
the system folders that are links on this machine (`/bin -> usr/bin` on a merged-/usr
system) made again as links. Everything a rep may read is then bind-mounted read-only at
run time, exactly what bubblewrap mounts (the system folders, the CLI install, the
runtimes), so a container and a bubblewrap rep read the same files and the CLI is the one
evalkit checked. Nothing is pulled from a registry: the tar is written here, byte for byte
the same for the same inputs (sorted names, time 0, owner root), imported with
`docker|podman import`, and tagged by its own hash, which each rep's bundle names.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import tarfile
from functools import lru_cache

from evalkit.errors import PrerequisiteError
from evalkit.run.backends.confine import SYSTEM

NAME = "localhost/evalkit-root"
FOLDERS = ("dev", "etc", "home", "proc", "root", "run", "sys", "tmp", "usr", "var", "var/tmp")
"""Mount points every container has, besides the system folders of this machine."""


def skeleton() -> tuple[tuple[str, str], ...]:
    """(name, link target or '' for a folder) of the root, sorted: the inputs of the image."""
    entries = {name: "" for name in FOLDERS}
    for folder in SYSTEM:
        name = folder.lstrip("/")
        if os.path.islink(folder):
            entries[name] = os.readlink(folder)
        elif os.path.isdir(folder):
            entries[name] = ""
    return tuple(sorted(entries.items()))


def tar_of(entries: tuple[tuple[str, str], ...]) -> bytes:
    """The skeleton as a tar, the same bytes for the same entries."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, target in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if target:
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
            else:
                info.type = tarfile.DIRTYPE
                info.mode = 0o1777 if name in ("tmp", "var/tmp") else 0o755
            tar.addfile(info)
    return out.getvalue()


def tag(entries: tuple[tuple[str, str], ...] | None = None) -> str:
    """The image's name, tagged by the hash of its tar."""
    data = tar_of(skeleton() if entries is None else entries)
    return f"{NAME}:{hashlib.sha256(data).hexdigest()[:16]}"


@lru_cache(maxsize=4)
def ensure(tool: str, env_items: tuple[tuple[str, str], ...] = ()) -> str:
    """The image's tag, imported into the engine `tool` first if it lacks it (once per
    machine: later calls find it by its tag)."""
    env = {**os.environ, **dict(env_items)}
    entries = skeleton()
    name = tag(entries)
    have = subprocess.run([tool, "image", "inspect", name], capture_output=True, env=env,
                          timeout=60, check=False)  # fmt: skip
    if have.returncode == 0:
        return name
    made = subprocess.run([tool, "import", "-", name], input=tar_of(entries),
                          capture_output=True, env=env, timeout=300, check=False)  # fmt: skip
    if made.returncode != 0:
        said = made.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"]
        raise PrerequisiteError(f"{tool} import of the root image failed: {said[-1][:160]}")
    return name

"""bubblewrap, the Linux default: the rules of `run/backends/confine.py` as a backend."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import evalkit.run.backends.confine as bubble
from evalkit.run.backends.confine import Confined
from evalkit.run.world import Places


class Bubblewrap:
    """A fresh mount, network, process and user namespace per rep; nothing of the machine
    is visible but what is mounted, so no channel stays partial."""

    name = "bwrap"
    partial: tuple[str, ...] = ()
    remaps = True
    labels = True
    proves_here = False

    def unavailable(self) -> str | None:
        return bubble.unavailable()

    def version(self) -> str:
        return _version(shutil.which("bwrap") or "")

    def declarations(self) -> dict[str, str]:
        return {}

    def reap(self) -> list[str]:
        return []  # --die-with-parent: the sandbox dies with evalkit, nothing is left

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
        return bubble.confine(
            command, env, cwd, writable, home, cli, hidden, shown, hosts, places, labels
        )


@lru_cache(maxsize=2)
def _version(tool: str) -> str:
    """`bwrap --version`'s number ('' when it cannot be asked)."""
    if not tool:
        return ""
    try:
        said = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return said.stdout.strip().rpartition(" ")[2]

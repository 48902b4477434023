"""The confinement seam: one adapter per OS sandbox, each meeting the same contract.

Every backend keeps a rep to its own folders (writable), the system, CLI install and
runtimes (read-only), one door out, and nothing else: the suite, results, other reps, HOME
and guarded paths unreadable. Callers ask the adapter (`Backend`) for what it can do; no
`if backend == ...` outside this package. A backend names the channels a rep can still see
of the machine (`partial`), which its rows then carry as a `world:partial:` flag.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol

from evalkit.errors import ConfigError, PrerequisiteError
from evalkit.run.backends.confine import UNCONFINED_HINT, Confined
from evalkit.run.world import Places

NAMES = ("bwrap", "srt", "docker", "podman")
DEFAULTS = {"linux": "bwrap", "darwin": "srt"}


class Backend(Protocol):
    """One way to confine a rep, and what it says about itself."""

    name: str
    partial: tuple[str, ...]
    """Channels a confined rep can still see of the machine; empty when the world holds."""
    remaps: bool
    """Whether the rep's folders can be shown at their world paths (a world of its own)."""
    labels: bool
    """Whether a rep can reach its own telemetry receiver (a second bridge of its door)."""
    proves_here: bool
    """Whether its rows are publishable only when the preflight's `policy:escape` held on the
    machine that ran them (srt on macOS, whose Seatbelt nothing elsewhere enforces)."""

    def unavailable(self) -> str | None:
        """Why no rep can be confined by this backend here, naming the fix; None if it can."""
        ...

    def version(self) -> str:
        """The backend's version as its own tool reports it ('' when it cannot be asked)."""
        ...

    def declarations(self) -> dict[str, str]:
        """What each rep's bundle names of the backend besides its name (a container's
        image)."""
        ...

    def reap(self) -> list[str]:
        """Remove what an earlier evalkit that died left of its reps (labelled containers
        whose owner is gone); what was removed."""
        ...

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
        """`command` wrapped to run confined, with what it may reach recorded; `labels`
        is the rep's telemetry receiver, bridged in where the backend can."""
        ...


def default_name(platform: str = sys.platform) -> str | None:
    """The backend a platform confines with when none is named; None where none can."""
    return DEFAULTS.get(platform)


def backend(name: str = "") -> Backend:
    """The adapter for `name` ('' for this platform's default); a name no adapter serves,
    or a platform with no default, is refused in one line."""
    chosen = name or default_name()
    if chosen is None:
        raise PrerequisiteError(f"nothing confines a rep on {sys.platform} yet: {UNCONFINED_HINT}")
    if chosen == "bwrap":
        from evalkit.run.backends.bwrap import Bubblewrap

        return Bubblewrap()
    if chosen == "srt":
        from evalkit.run.backends.srt import SandboxRuntime

        return SandboxRuntime()
    if chosen == "docker":
        from evalkit.run.backends.container import Docker

        return Docker()
    if chosen == "podman":
        from evalkit.run.backends.container import Podman

        return Podman()
    raise ConfigError(f"--confine {chosen}: not one of {', '.join(NAMES)}")


def require(name: str = "") -> Backend:
    """The chosen backend, refused before anything is planned where it cannot confine."""
    chosen = backend(name)
    why = chosen.unavailable()
    if why is not None:
        raise PrerequisiteError(f"reps run confined by default, and {why}")
    chosen.reap()
    return chosen

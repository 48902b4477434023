"""A round's proposer: a command run in a sandbox of its own on a copy of the best wording.

The proposer sees a scratch folder holding `wording/` (the subject as the incumbent variant
makes it, at its suite-relative paths: its working directory) and `brief.md`, and nothing
of the suite, the results or the reserve. It runs confined by the same backend as a rep
(bubblewrap: no network, only its scratch folder writable, the suite and WORKDIR hidden)
unless the caller runs unconfined. Whatever it changed outside the allowed paths is
discarded and named; a change inside them becomes the next variant's overlay.

`--proposer-cmd CMD` is the proposer: `sh -c CMD`, with `TUNE_BRIEF` (the brief's path) and
`TUNE_ROUND` (the round's number) in its environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import RefusedError

PROPOSER_TIMEOUT = 600.0


@dataclass
class Proposal:
    """What a proposer left, against the wording it was handed."""

    files: dict[str, bytes] = field(default_factory=dict)
    """Changed or added files inside the allowed paths: suite-relative path -> content."""
    discarded: list[str] = field(default_factory=list)
    """Paths it changed, added or removed that were not its to change (or, removed, that an
    overlay cannot express)."""
    exit_code: int | None = 0
    stderr_tail: str = ""
    reps: int = 0
    """Reps it spent of the budget: one for an agent, none for a command."""
    cost_usd: float = 0.0
    """What its CLI reported it cost (a real model's only)."""
    failed: str = ""
    """Why an agent proposer did not finish its turn ('' when it did)."""

    @property
    def empty(self) -> bool:
        return not self.files


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under root by its relative path (links are not wording)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def inside(rel: str, paths: list[str]) -> bool:
    return any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in paths)


def _command(cmd: str, scratch: Path, wording: Path, round_no: int, unconfined: bool
             ) -> tuple[list[str], dict[str, str], tuple[int, ...], object]:  # fmt: skip
    """The proposer's command line and environment, wrapped by the confinement backend."""
    sh = shutil.which("sh") or "/bin/sh"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch / "home"),
        "LANG": "C.UTF-8",
        "TUNE_BRIEF": str(scratch / "brief.md"),
        "TUNE_ROUND": str(round_no),
    }
    if unconfined:
        return [sh, "-c", cmd], env, (), None
    from evalkit.run.backends.confine import confine, require_confinement

    require_confinement()
    boxed = confine(
        [sh, "-c", cmd], env, wording, [scratch], scratch / "home", Path(sh), hidden=[],
    )  # fmt: skip
    return boxed.command, boxed.env, boxed.pass_fds, boxed


def propose(
    cmd: str, wording_root: Path, brief: str, paths: list[str], round_no: int,
    unconfined: bool = False, timeout: float = PROPOSER_TIMEOUT,
) -> Proposal:  # fmt: skip
    """Run the proposer once on a copy of `wording_root` and say what it changed."""
    scratch = Path(tempfile.mkdtemp(prefix="tune-proposer-"))
    try:
        wording = scratch / "wording"
        shutil.copytree(wording_root, wording, symlinks=True)
        (scratch / "home").mkdir()
        (scratch / "brief.md").write_text(brief, encoding="utf-8")
        before = snapshot(wording)
        argv, env, fds, boxed = _command(cmd, scratch, wording, round_no, unconfined)
        try:
            done = subprocess.run(argv, cwd=wording, env=env, pass_fds=fds, timeout=timeout,
                                  stdin=subprocess.DEVNULL, capture_output=True)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise RefusedError(f"tune: the proposer ran past {timeout:g}s; stopped") from None
        finally:
            if boxed is not None:
                boxed.stop()  # type: ignore[attr-defined]
        return compare_snapshots(before, snapshot(wording), paths, done.returncode, done.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compare_snapshots(before: dict[str, bytes], after: dict[str, bytes], paths: list[str],
                      code: int | None, stderr: bytes) -> Proposal:  # fmt: skip
    """What changed between two snapshots of the wording: inside `paths` kept, the rest
    discarded and named."""
    found = Proposal(exit_code=code, stderr_tail=stderr.decode("utf-8", "replace")[-400:])
    for rel, data in after.items():
        if before.get(rel) == data:
            continue
        if inside(rel, paths):
            found.files[rel] = data
        else:
            found.discarded.append(rel)
    found.discarded += [f"{rel} (removed)" for rel in before if rel not in after]
    return found

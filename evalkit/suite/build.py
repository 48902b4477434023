"""Built fixture files: declared in a suite's config, rebuilt when missing or stale, never
committed, and hashed by what they mean rather than by their bytes.

A build step's output lives inside the project fixture, so every sandbox gets a copy and
an agent's edit to it shows in the diff. The source fixture is hashed without it; the
output gets its own canonical hash. A stamp beside the suite records what the output was
built from (the project's hash and the tool's version), so a change to either rebuilds it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.models import BuildStep
from evalkit.scoring.hashing import iter_files, tree_hash

STAMP_DIR = ".build"
BUILD_TIMEOUT = 300.0
_GRAPH_VOLATILE = frozenset({"community", "community_name"})
"""graphify's community labels come from clustering, not from the code: left out of the hash."""
_local = threading.Lock()


class BuildError(ConfigError):
    """A build step failed; the suite cannot be run until it succeeds."""


def outputs(steps: list[BuildStep]) -> frozenset[str]:
    return frozenset(s.output.strip("/") for s in steps)


def _tool(argv: list[str], project: Path) -> list[str]:
    """argv with {project} expanded and the tool found beside this Python first."""
    args = [a.replace("{project}", str(project)) for a in argv]
    beside = Path(sys.executable).parent / args[0]
    found = str(beside) if beside.is_file() else shutil.which(args[0])
    if found is None:
        raise BuildError(
            f"build: '{args[0]}' is not installed; `make setup` installs it into the venv"
        )
    return [found, *args[1:]]


def tool_version(step: BuildStep, project: Path) -> str:
    if not step.version:
        return ""
    done = subprocess.run(
        _tool(step.version, project), capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        return ""
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return lines[0] if lines else ""


def canonical_hash(step: BuildStep, folder: Path) -> str:
    """What the built output means: for a graphify graph, its nodes and links, sorted."""
    if not folder.is_dir():
        return "missing"
    if step.canonical == "files":
        return tree_hash(folder)
    try:
        data = json.loads((folder / "graph.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "unreadable"
    parts: list[str] = []
    for key in ("nodes", "links"):
        items = data.get(key) if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else []:
            kept = {k: v for k, v in item.items() if k not in _GRAPH_VOLATILE}
            parts.append(key + "\0" + json.dumps(kept, sort_keys=True))
    digest = hashlib.sha256("\n".join(sorted(parts)).encode())
    return "sha256:" + digest.hexdigest()


def _stamp_path(suite_root: Path, step: BuildStep) -> Path:
    return suite_root / STAMP_DIR / f"{step.name}.json"


def _read_stamp(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _prune(folder: Path, keep: list[str]) -> None:
    if not keep:
        return
    wanted = set(keep)
    for path in iter_files(folder):
        if path.relative_to(folder).as_posix() not in wanted:
            path.unlink()
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()
    missing = sorted(wanted - {p.relative_to(folder).as_posix() for p in iter_files(folder)})
    if missing:
        raise BuildError(f"build: {folder} lacks {', '.join(missing)} after the build")


def _run(step: BuildStep, suite_root: Path, project: Path) -> None:
    target = project / step.output
    shutil.rmtree(target, ignore_errors=True)
    try:
        done = subprocess.run(
            _tool(step.command, project),
            cwd=suite_root,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BuildError(f"build {step.name}: timed out after {BUILD_TIMEOUT:.0f} s") from None
    if done.returncode != 0 or not target.is_dir():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BuildError(
            f"build {step.name}: `{' '.join(step.command)}` exited {done.returncode} "
            f"without {step.output}/: {tail[0]}"
        )
    _prune(target, step.keep)


def ensure_built(
    suite_root: Path, project: Path, steps: list[BuildStep], force: bool = False
) -> list[str]:
    """Build each step whose output is missing or stale; return the names rebuilt."""
    if not steps:
        return []
    rebuilt: list[str] = []
    stamp_dir = suite_root / STAMP_DIR
    stamp_dir.mkdir(exist_ok=True)
    with _local, open(stamp_dir / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        source = tree_hash(project, outputs(steps))
        for step in steps:
            version = tool_version(step, project)
            stamp_path = _stamp_path(suite_root, step)
            stamp = _read_stamp(stamp_path)
            target = project / step.output
            fresh = (
                target.is_dir()
                and stamp.get("source") == source
                and stamp.get("tool_version") == version
                and stamp.get("output") == canonical_hash(step, target)
            )
            if fresh and not force:
                continue
            _run(step, suite_root, project)
            record = {
                "source": source,
                "tool_version": version,
                "output": canonical_hash(step, target),
            }
            stamp_path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
            rebuilt.append(step.name)
    return rebuilt

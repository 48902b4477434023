"""Fresh sandboxes: a git-inited copy of the project and pristine copies of the other fixtures."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path

from evalkit import __version__
from evalkit.errors import ConfigError, NotFoundError, RefusedError
from evalkit.models import EVIDENCE_FILES, SandboxManifest
from evalkit.records.kept.folderimage import FolderImage
from evalkit.records.kept.gitutil import commit_history, pack_objects
from evalkit.run.world import history_commits, world_start
from evalkit.scoring.fixturefiles import copy_fixture
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile

SANDBOX_JSON = "sandbox.json"
TRANSCRIPT = EVIDENCE_FILES["transcript"]
"""The CLI's stream, written in the sandbox under the name it is kept by."""


GUARDED_ANCESTOR_FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    ".claude/CLAUDE.local.md",
    "AGENTS.md",
)
"""Files the CLI loads into a session from the folder it runs in or any folder above it
(measured against the pinned CLI by capturing its requests), besides .claude/rules/*.md."""


def contamination_above(path: Path) -> Path | None:
    """A file the CLI would load into a session started at or under path: an instruction
    file (CLAUDE.md and its kin, AGENTS.md) or a rule under .claude/rules/."""
    here = path.resolve()
    for folder in (here, *here.parents):
        top = str(folder)
        for name in GUARDED_ANCESTOR_FILES:
            if os.path.isfile(os.path.join(top, name)):
                return folder / name
        if os.path.isdir(os.path.join(top, ".claude", "rules")):
            found = sorted((folder / ".claude" / "rules").rglob("*.md"))
            if found:
                return found[0]
    return None


def check_destination(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise RefusedError(f"{dest}: the sandbox destination must be new or empty")
    found = contamination_above(dest.parent if not dest.exists() else dest)
    if found is not None:
        raise RefusedError(
            f"{dest}: refusing to build a sandbox under {found}: the CLI would load it into "
            "every session and contaminate the measurement; choose a destination outside it"
        )


def build_sandbox(
    suite: Suite, scenario: ScenarioFile, dest: Path, start: str | None = None
) -> SandboxManifest:
    """The fixtures copied into dest, the project committed as the world's history dated
    from `start` (the grid's first day; today when not given)."""
    dest = dest.resolve()
    check_destination(dest)
    suite.ensure_built()
    fixtures = suite.fixture_dirs()
    dest.mkdir(parents=True, exist_ok=True)
    for name, source in fixtures.items():
        without = scenario.scenario.without if name == "project" else []
        copy_fixture(source, dest / name, without)
    commit_history(dest / "project", history_commits(suite.config.world, start))
    return _write_manifest(suite, scenario, dest)


def _write_manifest(suite: Suite, scenario: ScenarioFile, dest: Path) -> SandboxManifest:
    manifest = SandboxManifest(
        scenario=scenario.id,
        suite=suite.name,
        fixture_hashes=suite.fixture_hashes(),
        evalkit_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    (dest / SANDBOX_JSON).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return manifest


class SandboxTemplates:
    """One sandbox per scenario built the slow way (fixture copies, git init, add, commit)
    on first use, then copied whole for every later rep of the command. The copy holds the
    same files and the same commit (git runs with fixed names and dates), its objects in one
    pack rather than loose; only the index's file stamps differ, which git refreshes by
    content."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[Path, str, str, str], Path] = {}
        self._images: dict[tuple[Path, str, str, str], FolderImage] = {}
        self._building: dict[tuple[Path, str, str, str], threading.Lock] = {}
        self._root: Path | None = None

    def template(
        self, suite: Suite, scenario: ScenarioFile, scratch: Path, start: str | None = None
    ) -> Path:
        start = start or world_start()
        key = (suite.root.resolve(), scenario.id, scenario.sha256, start)
        with self._lock:
            if key in self._made:
                return self._made[key]
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="evalkit-templates-", dir=scratch))
                atexit.register(shutil.rmtree, self._root, True)
            building = self._building.setdefault(key, threading.Lock())
            root = self._root
        with building:
            with self._lock:
                if key in self._made:
                    return self._made[key]
            dest = Path(tempfile.mkdtemp(prefix="s", dir=root))
            build_sandbox(suite, scenario, dest, start)
            pack_objects(dest / "project")
            with self._lock:
                self._made[key] = dest
            return dest

    def copy(
        self,
        suite: Suite,
        scenario: ScenarioFile,
        dest: Path,
        scratch: Path,
        start: str | None = None,
    ) -> None:
        """A fresh sandbox at dest, the same as build_sandbox would make there."""
        dest = dest.resolve()
        check_destination(dest)
        template = self.template(suite, scenario, scratch, start)
        if dest.exists():
            dest.rmdir()
        shutil.copytree(template, dest, symlinks=True)
        _write_manifest(suite, scenario, dest)

    def reset(self, suite: Suite, scenario: ScenarioFile, dest: Path, scratch: Path) -> None:
        """dest, a sandbox laid out before (for this scenario or another), made the same as
        `copy` would make it: only what differs from the template is deleted or written."""
        start = world_start()
        key = (suite.root.resolve(), scenario.id, scenario.sha256, start)
        template = self.template(suite, scenario, scratch, start)
        with self._lock:
            image = self._images.get(key)
        if image is None:
            image = FolderImage.read(template, skip=lambda name: False)
            with self._lock:
                image = self._images.setdefault(key, image)
        image.reset(dest.resolve())
        _write_manifest(suite, scenario, dest)


TEMPLATES = SandboxTemplates()


def read_sandbox_json(sandbox: Path) -> SandboxManifest:
    path = sandbox / SANDBOX_JSON
    if not sandbox.is_dir():
        raise NotFoundError(f"{sandbox}: no such sandbox folder")
    if not path.is_file():
        raise NotFoundError(f"{path}: missing; was this folder made by `evalkit sandbox`?")
    try:
        return SandboxManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError and ValidationError too
        first = str(exc).splitlines()[0][:160]
        raise ConfigError(f"{path}: not a sandbox record evalkit wrote ({first})") from None


def expand(text: str, sandbox: Path, names: list[str], extra: dict[str, str] | None = None) -> str:
    """Expand {sandbox}, {project}, {<fixture>} and a checker's own names to absolute paths."""
    values = {"sandbox": str(sandbox), **{n: str(sandbox / n) for n in names}, **(extra or {})}
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def isolation_env(
    suite: Suite, sandbox: Path, places: dict[str, str] | None = None
) -> dict[str, str]:
    """The suite's isolation environment with its placeholders pointed into this sandbox,
    or at the world paths its folders appear at (`places`)."""
    names = list(suite.fixture_dirs())
    return {k: expand(v, sandbox, names, places) for k, v in suite.config.environment.items()}

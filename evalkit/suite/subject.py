"""The subject: the wording under test (plugin folders, and any wording files in the fixtures).

Everything else in a suite is the instrument, which the lock freezes. The subject is meant
to change between grids, so it is never enforced, only recorded: each rep runs against one
materialised copy of it (the suite's own files, an outside `--plugin` working copy in place
of the suite's plugin of the same name, or a named variant's overlay on top), whose hash
goes on every row and which is kept once per distinct hash in the results folder, so a row
still re-derives after the next wording edit.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import ConfigError, NotFoundError
from evalkit.models import NAME_PATTERN, RESERVED_VARIANTS, is_name
from evalkit.scoring.fixturefiles import copy_fixture, iter_files
from evalkit.scoring.hashing import tree_hash
from evalkit.suite.catalog import plugin_manifest_name
from evalkit.suite.config import Suite

SUBJECTS = "subjects"
"""WORKDIR/subjects/<hash>/: each distinct subject a rep ran with, kept once."""
SUITE_VARIANT = RESERVED_VARIANTS[0]
"""The variant name of the suite's own wording (no overlay)."""
AA_VARIANT = RESERVED_VARIANTS[2]
"""The suite's own wording, byte for byte, as a second arm: what an A/A run compares with."""
WITHOUT_SUBJECT = "none"
"""The no-plugin arm: no plugin loaded and every subject path left out of the sandbox, so a
rate with it against one with the suite's wording says what the wording itself causes."""


def subject_entries(suite: Suite) -> list[str]:
    """Suite-relative paths of the subject: `subject:` in evalkit.yaml, else the plugins."""
    entries = suite.config.subject if suite.config.subject is not None else suite.config.plugins
    found = []
    for entry in entries:
        rel = Path(entry).as_posix().strip("/")
        path = suite.root / rel
        if suite.config.subject is None and not path.is_dir():
            check_plugin_folder(path.resolve(), f"{suite.config_path}: plugins")
        if rel.startswith("..") or not path.exists():
            raise ConfigError(f"{suite.config_path}: subject: {path} is not in the suite")
        found.append(rel)
    return found


def fixture_subject_paths(suite: Suite) -> dict[str, list[str]]:
    """Fixture name -> subject paths inside it, relative to the fixture folder."""
    inside: dict[str, list[str]] = {}
    for name, folder in suite.fixture_dirs().items():
        base = folder.resolve()
        for rel in subject_entries(suite):
            try:
                inner = (suite.root / rel).resolve().relative_to(base).as_posix()
            except ValueError:
                continue
            inside.setdefault(name, []).append(inner)
    return inside


def _skipped(rel: str, skip: list[str]) -> bool:
    return any(rel == s or rel.startswith(s + "/") or s == "." for s in skip)


def instrument_tree_hash(root: Path, skip: list[str]) -> str:
    """tree_hash of a folder without the subject files inside it: the same bytes as
    tree_hash when nothing is skipped, so existing locks stay valid."""
    if not skip:
        return tree_hash(root)
    digest = hashlib.sha256()
    for path in iter_files(root):
        rel = path.relative_to(root).as_posix()
        if _skipped(rel, skip):
            continue
        mode = "x" if os.access(path, os.X_OK) else "-"
        body = ("link:" + os.readlink(path)).encode() if path.is_symlink() else path.read_bytes()
        digest.update(f"{rel}\0{mode}\0{len(body)}\0".encode())
        digest.update(body)
    return "sha256:" + digest.hexdigest()


def _plugin_name(folder: Path) -> str:
    return plugin_manifest_name(folder, "plugin")


def check_plugin_folder(path: Path, what: str) -> None:
    """The CLI ignores a bad --plugin-dir silently, so evalkit refuses it first, exactly as
    it refuses a suite's own plugin at load."""
    plugin_manifest_name(path, what)


def check_variant_name(variant: str) -> None:
    """A variant named on the command line: `suite` (the suite's own wording) or a name."""
    if variant in (SUITE_VARIANT, AA_VARIANT):
        return
    if variant in RESERVED_VARIANTS:
        raise ConfigError(f"--variant {variant}: the name is reserved; no variant runs as it yet")
    if not is_name(variant):
        raise ConfigError(f"--variant {variant!r}: a variant name is {NAME_PATTERN}")


@dataclass
class Subject:
    """One materialised subject: a folder holding each subject path at its suite-relative
    place, its hash, and the variant name it was built for."""

    root: Path
    entries: list[str]
    plugins: list[str]
    variant: str
    hash: str
    outside: dict[str, str] = field(default_factory=dict)
    """suite plugin path -> the outside working copy that replaced it (`--plugin`)."""
    _baselines: dict[str, Path] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def plugin_dirs(self) -> list[Path]:
        return [self.root / rel for rel in self.plugins]

    @property
    def key(self) -> str:
        return self.hash.removeprefix("sha256:")[:16]

    def apply(self, suite: Suite, sandbox: Path) -> None:
        """Lay the subject's fixture files over a freshly built sandbox."""
        for name, inner in fixture_subject_paths(suite).items():
            for rel in inner:
                _overlay(self.root / _fixture_rel(suite, name, rel), sandbox / name / rel)

    def baselines(self, suite: Suite) -> dict[str, Path]:
        """Fixture name -> the fixture with this subject applied: the diff baseline, so wording
        the subject put there never shows in a diff as if the agent wrote it. Built once."""
        with self._lock:
            if self._baselines is None:
                self._baselines = subject_baselines(suite, self.root)
            return dict(self._baselines)

    def keep(self, workdir: Path) -> Path:
        """Copy the subject into WORKDIR/subjects/<hash>/ unless a copy is there already."""
        dest = workdir / SUBJECTS / self.key
        if not dest.is_dir():
            tmp = Path(tempfile.mkdtemp(prefix=".subject-", dir=_mkdir(workdir / SUBJECTS)))
            shutil.copytree(self.root, tmp / "s", symlinks=True)
            try:
                (tmp / "s").rename(dest)
            except OSError:
                pass  # another process kept the same subject first
            shutil.rmtree(tmp, ignore_errors=True)
        return dest


def leave_out_subject(suite: Suite, sandbox: Path) -> None:
    """Remove every subject path from a freshly built sandbox: the no-plugin arm's layout."""
    for name, inner in fixture_subject_paths(suite).items():
        for rel in inner:
            _overlay(Path(os.devnull) / "absent", sandbox / name / rel)


def subject_baselines(suite: Suite, root: Path) -> dict[str, Path]:
    """Each fixture with the subject files under `root` laid over it (the fixture itself where
    the subject has nothing inside it)."""
    found = {}
    scratch: Path | None = None
    for name, folder in suite.fixture_dirs().items():
        inner = fixture_subject_paths(suite).get(name)
        if not inner:
            found[name] = folder
            continue
        if scratch is None:
            scratch = Path(tempfile.mkdtemp(prefix="evalkit-baseline-"))
            atexit.register(shutil.rmtree, scratch, True)
        dest = scratch / name
        copy_fixture(folder, dest)
        for rel in inner:
            _overlay(root / _fixture_rel(suite, name, rel), dest / rel)
        found[name] = dest
    return found


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fixture_rel(suite: Suite, name: str, inner: str) -> str:
    folder = suite.fixture_dirs()[name].resolve()
    return (folder / inner).relative_to(suite.root.resolve()).as_posix()


def _overlay(source: Path, dest: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
    elif source.is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    elif dest.is_dir():
        shutil.rmtree(dest)
    elif dest.exists():
        dest.unlink()


def _ignore(_: str, names: list[str]) -> list[str]:
    return [n for n in names if n in (".git", "__pycache__")]


def build_subject(
    suite: Suite, plugins: list[Path] | None = None, variant: str | None = None
) -> Subject:
    """Materialise the subject once per command: the suite's subject paths, each `--plugin`
    working copy in place of the suite plugin of the same name, then the variant's overlay."""
    entries = subject_entries(suite)
    plugin_rels = [Path(p).as_posix().strip("/") for p in suite.config.plugins]
    root = Path(tempfile.mkdtemp(prefix="evalkit-subject-"))
    atexit.register(shutil.rmtree, root, True)
    if variant == WITHOUT_SUBJECT:
        return _without_subject(root, entries, plugins)
    for rel in entries:
        source = suite.root / rel
        if source.is_dir():
            shutil.copytree(source, root / rel, symlinks=True, ignore=_ignore)
        else:
            _overlay(source, root / rel)
    for rel in plugin_rels:
        if not (root / rel).is_dir():
            shutil.copytree(suite.root / rel, root / rel, symlinks=True, ignore=_ignore)
    outside = {}
    for copy in plugins or []:
        copy = copy.expanduser().resolve()
        check_plugin_folder(copy, "--plugin")
        matches = [r for r in plugin_rels if _plugin_name(suite.root / r) == _plugin_name(copy)]
        if not matches:
            known = ", ".join(_plugin_name(suite.root / r) for r in plugin_rels) or "none"
            raise ConfigError(
                f"--plugin {copy}: plugin '{_plugin_name(copy)}' is not one of the suite's "
                f"plugins ({known})"
            )
        shutil.rmtree(root / matches[0])
        shutil.copytree(copy, root / matches[0], symlinks=True, ignore=_ignore)
        outside[matches[0]] = str(copy)
    if variant is not None:
        check_variant_name(variant)
    name = variant or SUITE_VARIANT
    if variant and variant not in (SUITE_VARIANT, AA_VARIANT):
        _apply_variant(suite, variant, root, entries + plugin_rels)
    for rel in plugin_rels:
        check_plugin_folder(root / rel, f"{suite.config_path}: plugins")
    return Subject(root, entries, plugin_rels, name, tree_hash(root), outside)


def _without_subject(root: Path, entries: list[str], plugins: list[Path] | None) -> Subject:
    """An empty subject: applied to a sandbox, each subject path is removed from it."""
    if plugins:
        raise ConfigError("--plugin: --variant none loads no plugin; drop one of the two")
    return Subject(root, entries, [], WITHOUT_SUBJECT, tree_hash(root))


def _apply_variant(suite: Suite, variant: str, root: Path, allowed: list[str]) -> None:
    config = suite.config.variants.get(variant)
    if config is None:
        known = ", ".join(sorted(suite.config.variants)) or "none defined"
        raise NotFoundError(f"{suite.config_path}: variants: no variant '{variant}' ({known})")
    if config.overlay is None:
        return
    overlay = suite.root / config.overlay
    if not overlay.is_dir():
        raise ConfigError(
            f"{suite.config_path}: variants.{variant}.overlay: {overlay} is not a folder"
        )
    for path in iter_files(overlay):
        rel = path.relative_to(overlay).as_posix()
        if not _skipped(rel, allowed):
            raise ConfigError(
                f"{overlay / rel}: variants.{variant} may overlay only subject files "
                f"({', '.join(allowed)}); this one is part of the instrument"
            )
        _overlay(path, root / rel)


def kept_subject(workdir: Path, subject_hash: str) -> Path:
    """The kept copy of a subject a rep ran with, for re-deriving its row: hashed again, so
    a copy edited after the run is named rather than silently re-derived against."""
    dest = workdir / SUBJECTS / subject_hash.removeprefix("sha256:")[:16]
    if not dest.is_dir():
        raise NotFoundError(f"{dest}: the subject this rep ran with was not kept")
    if tree_hash(dest) != subject_hash:
        raise NotFoundError(f"{dest}: edited since the run (it no longer hashes to {subject_hash})")
    return dest

"""Evidence kept beside every row: enough to rebuild the sandbox and re-score it without a model.

The artifact is a binary-safe git diff of each sandbox folder against its pinned
fixture, plus the redacted transcript, the judge's kept answer and the verdict.
A hash names an artifact; only the diff can re-derive one.
"""

from __future__ import annotations

import atexit
import json
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalkit import __version__
from evalkit.errors import RefusedError
from evalkit.models import DIFF_SUFFIX
from evalkit.records.kept.diff_index import Baseline, FolderIndex, baseline_blobs, index_folder
from evalkit.records.kept.folderimage import FolderImage
from evalkit.records.kept.gitutil import git
from evalkit.records.kept.redact import redact
from evalkit.scoring.fixturefiles import copy_fixture
from evalkit.scoring.hashing import sha256_bytes, sha256_file, tree_hash
from evalkit.scoring.observed import log_path
from evalkit.suite.config import Suite
from evalkit.suite.lock import neighbour_hashes


class _FixtureCommits:
    """One bare git dir per fixture folder, holding it as a single commit, made on first use
    and shared by every rep of the command: a rep's diff then costs two git calls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[Path, tuple[Path, str, Baseline]] = {}
        self._root: Path | None = None

    def get(self, fixture: Path) -> tuple[Path, str, Baseline]:
        with self._lock:
            if fixture not in self._made:
                if self._root is None:
                    self._root = Path(tempfile.mkdtemp(prefix="evalkit-fixtures-"))
                    atexit.register(shutil.rmtree, self._root, True)
                gitdir = self._root / f"{len(self._made)}.git"
                index = gitdir.with_suffix(".index")
                files = gitdir.with_suffix(".files")
                copy_fixture(fixture, files)
                git(self._root, "init", "-q", "--bare", str(gitdir))
                at = (f"--git-dir={gitdir}", f"--work-tree={files}")
                git(files, *at, "add", "-A", "--force", ".", index=index)
                tree = git(files, *at, "write-tree", index=index).decode().strip()
                self._made[fixture] = (gitdir, tree, baseline_blobs(gitdir, tree))
            return self._made[fixture]


_COMMITS = _FixtureCommits()


def ready_baselines(fixtures: Iterable[Path]) -> None:
    """Index each diff baseline now rather than at the first diff that needs it: called
    while an agent runs, so the rep's record does not wait for it."""
    for fixture in fixtures:
        _COMMITS.get(fixture.resolve())


def folder_diff(fixture: Path, current: Path) -> bytes:
    """`git diff --binary` from fixture to current, as paths relative to the folder.

    The fixture's tree is indexed once; each rep's folder is indexed into a private index
    file against it (`diff_index.py`: every file as what it is, whatever else the agent
    left, and a header naming what a stated rule left out), so new, deleted and binary
    files and mode changes are all captured, ignored files included.
    """
    if current.is_dir() and tree_hash(fixture) == tree_hash(current):
        return b""
    gitdir, tree, baseline = _COMMITS.get(fixture.resolve())
    with tempfile.TemporaryDirectory(prefix="evalkit-diff-") as tmp:
        index = Path(tmp) / "index"
        listed = index_folder(current, gitdir, baseline) if current.is_dir() else FolderIndex()
        at = f"--git-dir={gitdir}"
        git(Path(tmp), at, "update-index", "-z", "--add", "--index-info",
            input=b"".join(listed.entries), index=index)  # fmt: skip
        diff = git(Path(tmp), at, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
                   tree, index=index)  # fmt: skip
        return listed.header() + diff


def replay_folder(fixture: Path | FolderImage, diff: bytes, dest: Path) -> None:
    """Lay the fixture out at dest (from a copy already read, when given one: then a dest an
    earlier replay left is reset instead) and apply diff there (a diff whose header alone is
    left names only what was left out of it). git looks for no repository above dest: `git
    apply` inside another work tree resolves paths against that tree's root and silently
    applies nothing."""
    if isinstance(fixture, FolderImage):
        if dest.is_dir() and not dest.is_symlink():
            fixture.reset(dest)
        else:
            fixture.write(dest)
    else:
        copy_fixture(fixture, dest)
    if diff.strip():
        git(dest, "apply", "--binary", "--allow-empty", "--whitespace=nowarn", "-", input=diff,
            ceiling=dest.parent)  # fmt: skip


def replay_log(kept: bytes | None, sandbox: Path) -> None:
    """The kept run log of the observed scripts laid out where scoring reads it, for a
    replayed rep."""
    if kept is None:
        return
    log = log_path(sandbox)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(kept)


def declarations(
    suite: Suite,
    scenario_sha256: str,
    requested_model: str,
    model_id: str,
    cli_version: str,
    run: dict[str, Any] | None = None,
    variant: str = "suite",
    subject_hash: str = "",
) -> dict[str, Any]:
    """Everything a rep's result depends on that is not the agent's own behaviour: the
    frozen instrument, the subject it ran with (variant and hash), and how the rep was
    driven (`run`, see runner.run_declarations)."""
    rubric = suite.rubric_path
    decl = {
        "suite": suite.name,
        "fixture_hashes": suite.fixture_hashes(),
        "scenario_sha256": scenario_sha256,
        "rubric_sha256": sha256_file(rubric) if rubric.is_file() else "",
        "variant": variant,
        "subject_hash": subject_hash,
        "checker": f"{suite.checker.name}@{suite.checker.version}",
        "checker_source": suite.checker.source_hash(),
        "lock": suite.lock_state,
        "model": requested_model,
        "model_id": model_id,
        "cli_version": cli_version,
        "evalkit_version": __version__,
        **(run or {}),
    }
    if suite.config.neighbours:
        decl["neighbours"] = neighbour_hashes(suite)
    if suite.config.judge.rubrics:
        decl["rubrics_sha256"] = {
            name: sha256_file(suite.rubric_file(name)) for name in suite.config.judge.rubrics
        }
    assert_secret_free(decl)
    return decl


SECRET_KEY = re.compile(r"(?i)(api[_-]?key|token|secret|password|credential|auth)")


def secret_shapes(value: Any, where: str = "") -> list[str]:
    """Where a bundle holds a secret-shaped value, or a secret-named key with a value that is
    not a role placeholder like <set>."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if SECRET_KEY.search(str(key)) and not (
                isinstance(item, str) and re.fullmatch(r"<[\w:-]+>", item)
            ):
                found.append(path)
            else:
                found += secret_shapes(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += secret_shapes(item, f"{where}[{index}]")
    elif isinstance(value, str) and redact(value) != value:
        found.append(where)
    return found


def assert_secret_free(decl: dict[str, Any]) -> None:
    """A bundle is kept in every manifest line and names a configuration in public: refuse
    one that would carry a secret rather than trust every caller to have left it out."""
    found = secret_shapes(decl)
    if found:
        raise RefusedError(
            "refusing to record a bundle holding secret-shaped values at: " + ", ".join(found)
        )


def bundle_id(decl: dict[str, Any]) -> str:
    canonical = json.dumps(decl, sort_keys=True, separators=(",", ":")).encode()
    return "evb-" + sha256_bytes(canonical)[:16]


def redact_diff(diff: bytes) -> bytes:
    """Redact secret-shaped values on the added lines of a text diff. The hunk still applies
    (line counts are unchanged); the file it rebuilds holds the redacted text."""
    lines = diff.split(b"\n")
    for index, line in enumerate(lines):
        if line.startswith(b"+") and not line.startswith(b"+++"):
            lines[index] = redact(line.decode("utf-8", "surrogateescape")).encode(
                "utf-8", "surrogateescape"
            )
    return b"\n".join(lines)


def keep_folder_diffs(
    suite: Suite, sandbox: Path, folder: Path, baselines: dict[str, Path] | None = None
) -> dict[str, str]:
    """Write <name>.diff for every fixture folder against its baseline (the fixture with the
    subject applied; the fixture itself by default); return name -> path relative to folder."""
    written = {}
    for name, fixture in (baselines or suite.fixture_dirs()).items():
        diff = redact_diff(folder_diff(fixture, sandbox / name))
        (folder / (name + DIFF_SUFFIX)).write_bytes(diff)
        written[name] = name + DIFF_SUFFIX
    return written

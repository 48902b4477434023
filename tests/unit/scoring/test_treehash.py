"""The project's tree hash is git's: `git write-tree` over the same files gives the same
hash, and the kept diff's file set (no caches, no `.git`) is what it covers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.treehash import tree_hash


def _git_tree(folder: Path) -> str:
    """What git itself makes of the folder: every file added to a fresh index, then written."""
    env = {**os.environ, "GIT_INDEX_FILE": str(folder.parent / "oracle-index")}
    git = ["git", "-C", str(folder), "-c", "core.fileMode=true"]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    subprocess.run([*git, "add", "-A", "--", "."], check=True, env=env)
    done = subprocess.run([*git, "write-tree"], check=True, env=env, capture_output=True)
    return done.stdout.decode().strip()


def _corpus(root: Path) -> None:
    """Names git sorts oddly (a folder beside a file that extends its name), an executable,
    a link to a file, bytes that are no text, an empty file and an empty folder."""
    (root / "a" / "b").mkdir(parents=True)
    (root / "a.txt").write_text("dot sorts before slash\n")
    (root / "a-b").write_text("dash\n")
    (root / "a" / "b" / "deep.py").write_text("print('x')\n")
    (root / "a" / "b" / "empty").write_bytes(b"")
    (root / "bin").mkdir()
    (root / "bin" / "test").write_text("#!/bin/sh\nexit 0\n")
    (root / "bin" / "test").chmod(0o755)
    (root / "link").symlink_to("a.txt")
    (root / "raw.bin").write_bytes(bytes(range(256)))
    (root / "nothing-here").mkdir()
    (root / "ünïcode name").write_text("utf-8 names\n")


def test_the_tree_hash_is_the_one_git_writes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _corpus(root)
    ours = tree_hash(str(root), SKIPPED_NAMES)
    assert ours == _git_tree(root)


def test_an_empty_project_has_gits_empty_tree(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    assert tree_hash(str(root), SKIPPED_NAMES) == _git_tree(root)


def test_caches_and_version_control_are_not_part_of_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _corpus(root)
    before = tree_hash(str(root), SKIPPED_NAMES)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (root / "a" / "b" / "deep.pyc").write_bytes(b"\0")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert tree_hash(str(root), SKIPPED_NAMES) == before


def test_a_path_replaced_is_hashed_from_the_file_it_names(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _corpus(root)
    before = tree_hash(str(root), SKIPPED_NAMES)
    real = tmp_path / "real-test"
    real.write_bytes((root / "bin" / "test").read_bytes())
    real.chmod(0o755)
    (root / "bin" / "test").write_text("#!/bin/sh\n# a wrapper\n")
    replaced = tree_hash(str(root), SKIPPED_NAMES, {"bin/test": str(real)})
    assert replaced == before
    assert tree_hash(str(root), SKIPPED_NAMES) != before


def test_a_pipe_in_the_project_is_never_opened(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _corpus(root)
    before = tree_hash(str(root), SKIPPED_NAMES)
    os.mkfifo(root / "fifo")
    assert tree_hash(str(root), SKIPPED_NAMES) == before

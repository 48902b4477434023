"""A folder read once lays out the same tree copy_fixture would copy, every time."""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.run.folderimage import FolderImage
from evalkit.scoring.fixturefiles import copy_fixture
from evalkit.scoring.hashing import tree_hash


def make_fixture(root: Path) -> Path:
    fixture = root / "fixture"
    (fixture / "lib" / "deep").mkdir(parents=True)
    (fixture / "lib" / "deep" / "a.rb").write_text("puts 1\n")
    (fixture / "empty").mkdir()
    (fixture / "run.sh").write_text("echo hi\n")
    os.chmod(fixture / "run.sh", 0o755)
    (fixture / "blob.bin").write_bytes(bytes(range(256)) * 8)
    os.symlink("lib/deep/a.rb", fixture / "link.rb")
    os.symlink("lib", fixture / "lib-link")
    (fixture / "__pycache__").mkdir()
    (fixture / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (fixture / "notes.md~").write_text("editor dropping\n")
    return fixture


def test_an_image_writes_the_tree_copy_fixture_copies(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    copied, written = tmp_path / "copied", tmp_path / "written"
    copy_fixture(fixture, copied)
    FolderImage.read(fixture).write(written)

    assert tree_hash(written) == tree_hash(copied) == tree_hash(fixture)
    assert sorted(p.relative_to(written).as_posix() for p in written.rglob("*")) == sorted(
        p.relative_to(copied).as_posix() for p in copied.rglob("*")
    )
    assert os.readlink(written / "lib-link") == "lib" and (written / "empty").is_dir()
    assert not (written / "__pycache__").exists() and not (written / "notes.md~").exists()


def test_an_image_written_twice_gives_two_independent_trees(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    image = FolderImage.read(fixture)
    image.write(tmp_path / "one")
    (tmp_path / "one" / "run.sh").write_text("changed\n")
    image.write(tmp_path / "two")
    assert (tmp_path / "two" / "run.sh").read_text() == "echo hi\n"
    assert (fixture / "run.sh").read_text() == "echo hi\n"

"""A folder read once lays out the same tree copy_fixture would copy, every time."""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.records.kept.folderimage import FolderImage
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


def entries(root: Path) -> list[tuple[str, str, int, int, bytes]]:
    """Every name under root with its kind, mode, file time and bytes (or link target)."""
    found = []
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found.append((rel, "link", 0, 0, os.fsencode(os.readlink(path))))
        elif path.is_dir():
            found.append((rel, "dir", info.st_mode & 0o7777, 0, b""))
        else:
            found.append((rel, "file", info.st_mode & 0o7777, info.st_mtime_ns, path.read_bytes()))
    return found


def test_a_reset_folder_holds_exactly_the_image_again(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    image = FolderImage.read(fixture, skip=lambda name: False)
    used = tmp_path / "used"
    image.write(used)
    (used / "run.sh").write_text("echo changed\n")
    (used / "blob.bin").write_bytes(b"same size".ljust(2048, b"."))
    os.utime(used / "blob.bin", ns=(fixture.joinpath("blob.bin").stat().st_mtime_ns,) * 2)
    os.chmod(used / "lib" / "deep" / "a.rb", 0o600)
    (used / "link.rb").unlink()
    os.symlink("/etc/passwd", used / "link.rb")
    (used / "lib-link").unlink()
    (used / "lib-link").mkdir()
    (used / "new" / "deeper").mkdir(parents=True)
    (used / "new" / "deeper" / "x").write_text("added\n")
    os.chmod(used / "new" / "deeper", 0o500)
    os.chmod(used / "empty", 0o000)
    (used / "__pycache__" / "x.pyc").unlink()
    (tmp_path / "outside").write_text("puts 1\n")
    os.link(tmp_path / "outside", used / "hard.rb")

    image.reset(used)

    assert entries(used) == entries(fixture)
    (used / "lib" / "deep" / "a.rb").write_text("after reset\n")
    assert (fixture / "lib" / "deep" / "a.rb").read_text() == "puts 1\n"
    assert (tmp_path / "outside").read_text() == "puts 1\n"


def test_a_file_kept_by_reset_is_never_one_hard_linked_elsewhere(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    image = FolderImage.read(fixture)
    used = tmp_path / "used"
    image.write(used)
    os.link(used / "run.sh", tmp_path / "elsewhere.sh")
    image.reset(used)
    (used / "run.sh").write_text("changed\n")
    assert (tmp_path / "elsewhere.sh").read_text() == "echo hi\n"


def test_reset_gives_back_a_folder_mode_it_opened_up_to_walk(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    os.chmod(fixture / "lib", 0o555)
    image = FolderImage.read(fixture, skip=lambda name: False)
    used = tmp_path / "used"
    image.write(used)
    image.reset(used)
    assert entries(used) == entries(fixture)
    os.chmod(fixture / "lib", 0o755)
    os.chmod(used / "lib", 0o755)


def test_a_file_whose_only_change_is_its_time_gets_the_time_back_in_place(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    image = FolderImage.read(fixture, skip=lambda name: False)
    used = tmp_path / "used"
    image.write(used)
    os.utime(used / "run.sh", ns=(1_000_000_000, 1_000_000_000))
    before = (used / "run.sh").stat().st_ino
    image.reset(used)
    assert entries(used) == entries(fixture)
    assert (used / "run.sh").stat().st_ino == before

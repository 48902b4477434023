"""A kept diff rebuilds the sandbox folder exactly, from the pinned fixture alone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from evalkit.records.kept.evidence import folder_diff, replay_folder
from evalkit.records.kept.folderimage import FolderImage
from evalkit.scoring.hashing import tree_hash


def make_fixture(root: Path) -> Path:
    fixture = root / "fixture"
    (fixture / "lib").mkdir(parents=True)
    (fixture / "lib" / "a.rb").write_text("puts 1\n")
    (fixture / "gone.md").write_text("to be deleted\n")
    (fixture / "run.sh").write_text("echo hi\n")
    (fixture / ".gitignore").write_text("*.log\n")
    return fixture


def test_new_deleted_binary_ignored_and_mode_changes_all_replay(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    after = tmp_path / "after"
    shutil.copytree(fixture, after)
    (after / "lib" / "a.rb").write_text("puts 2\n")
    (after / "gone.md").unlink()
    (after / "notes").mkdir()
    (after / "notes" / "new-note.md").write_text("---\ntitle: x\n---\n")
    (after / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (after / "debug.log").write_text("ignored by the fixture's .gitignore, still evidence\n")
    os.chmod(after / "run.sh", 0o755)

    diff = folder_diff(fixture, after)
    replayed = tmp_path / "replay"
    replay_folder(fixture, diff, replayed)

    assert tree_hash(replayed) == tree_hash(after)


def test_an_untouched_folder_gives_an_empty_diff(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(fixture, copy)
    assert folder_diff(fixture, copy) == b""


def test_replay_inside_another_git_work_tree_still_applies(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    after = tmp_path / "after"
    shutil.copytree(fixture, after)
    (after / "lib" / "a.rb").write_text("puts 3\n")
    outer = tmp_path / "outer"
    outer.mkdir()
    os.system(f"git -C {outer} init -q")
    replay_folder(fixture, folder_diff(fixture, after), outer / "replay")
    assert (outer / "replay" / "lib" / "a.rb").read_text() == "puts 3\n"


def test_a_changed_binary_file_replays_from_an_image_of_the_fixture(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    (fixture / "blob.bin").write_bytes(bytes(range(256)) * 64)
    after = tmp_path / "after"
    shutil.copytree(fixture, after)
    data = bytearray((after / "blob.bin").read_bytes())
    data[100:110] = b"\xff" * 10
    (after / "blob.bin").write_bytes(bytes(data))

    replayed = tmp_path / "replay"
    replay_folder(FolderImage.read(fixture), folder_diff(fixture, after), replayed)

    assert tree_hash(replayed) == tree_hash(after)


def test_a_second_replay_into_the_same_folder_holds_only_its_own_diff(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    image = FolderImage.read(fixture)
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(fixture, first)
    (first / "lib" / "a.rb").write_text("puts 2\n")
    (first / "gone.md").unlink()
    (first / "notes").mkdir()
    (first / "notes" / "new.md").write_text("first\n")
    shutil.copytree(fixture, second)
    (second / "run.sh").write_text("echo second\n")

    replayed = tmp_path / "replay"
    replay_folder(image, folder_diff(fixture, first), replayed)
    replay_folder(image, folder_diff(fixture, second), replayed)

    assert tree_hash(replayed) == tree_hash(second)

"""compare: what changed in a folder against its fixture, by content."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evalkit.scoring.fsdiff import compare, read_files


@pytest.fixture
def fixture(tmp_path: Path) -> Path:
    root = tmp_path / "fixture"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "kept.md").write_text("kept\n")
    (root / "notes" / "edited.md").write_text("before\n")
    (root / "notes" / "gone.md").write_text("gone\n")
    (root / "empty.txt").write_text("")
    os.symlink("notes/kept.md", root / "link")
    return root


def sandbox_of(fixture: Path) -> Path:
    return Path(shutil.copytree(fixture, fixture.parent / "sandbox", symlinks=True))


def test_added_changed_and_deleted_files_are_named_by_content(fixture: Path) -> None:
    sandbox = sandbox_of(fixture)
    (sandbox / "notes" / "edited.md").write_text("after!\n")
    (sandbox / "notes" / "gone.md").unlink()
    (sandbox / "notes" / "new.md").write_text("new\n")
    os.utime(sandbox / "notes" / "kept.md", (0, 0))
    got = compare(fixture, sandbox)
    assert (got.added, got.changed, got.deleted) == (
        ["notes/new.md"],
        ["notes/edited.md"],
        ["notes/gone.md"],
    )


def test_a_link_pointed_elsewhere_is_a_change(fixture: Path) -> None:
    sandbox = sandbox_of(fixture)
    (sandbox / "link").unlink()
    os.symlink("notes/edited.md", sandbox / "link")
    assert compare(fixture, sandbox).changed == ["link"]


def test_files_read_once_compare_as_the_folder_does(fixture: Path) -> None:
    sandbox = sandbox_of(fixture)
    (sandbox / "notes" / "edited.md").write_text("before?\n")
    (sandbox / "link").unlink()
    assert compare(read_files(fixture), sandbox) == compare(fixture, sandbox)


def test_a_pipe_in_place_of_a_file_is_a_change_and_is_not_read(fixture: Path) -> None:
    sandbox = sandbox_of(fixture)
    (sandbox / "empty.txt").unlink()
    os.mkfifo(sandbox / "empty.txt")
    assert compare(read_files(fixture), sandbox).changed == ["empty.txt"]

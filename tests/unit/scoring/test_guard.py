"""A change to a guarded real-world path is seen by its effect, cheaply, and never caused."""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.models import GuardRecord
from evalkit.scoring.guard import Watch, fingerprint


def test_a_path_that_did_not_exist_and_then_did_is_a_change(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    watch = Watch([root])
    root.mkdir()
    (root / "a.md").write_text("x\n")
    record = watch.finish()
    assert record.changes() == [str(root), f"{root}/a.md"]
    assert record.paths[0].changed["a.md"].sha256 is not None


def test_an_untouched_vault_has_no_change_and_nothing_is_read(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "n.md").write_text("note\n")
    os.chmod(root / "sub" / "n.md", 0o000)  # fingerprinting must not need to read a note
    try:
        record = Watch([root]).finish()
    finally:
        os.chmod(root / "sub" / "n.md", 0o644)
    assert record.changes() == []
    assert record.paths[0].before_digest == record.paths[0].after_digest
    assert record.paths[0].before_count == 3


def test_an_edit_and_a_deletion_are_named_and_only_the_edit_is_hashed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "keep.md").write_text("same\n")
    (root / "edit.md").write_text("old\n")
    (root / "gone.md").write_text("bye\n")
    watch = Watch([root])
    (root / "edit.md").write_text("new text\n")
    (root / "gone.md").unlink()
    record = GuardRecord.model_validate_json(watch.finish().model_dump_json())
    changed = record.paths[0].changed
    assert sorted(changed) == ["edit.md", "gone.md"]
    assert changed["gone.md"].after is None and changed["gone.md"].sha256 is None
    assert changed["edit.md"].sha256 is not None


def test_a_symlink_in_the_vault_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big.md").write_text("x")
    root = tmp_path / "vault"
    root.mkdir()
    (root / "link").symlink_to(outside)
    assert set(fingerprint(root)) == {".", "link"}

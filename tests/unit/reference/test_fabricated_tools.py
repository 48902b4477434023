"""The fabricated file tools place a relative path as the CLI does, in its working directory
(the project), never beside the process that plays the script."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.fabricate import fabricate


def test_a_relative_write_lands_in_the_project_not_in_evalkits_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sandbox" / "project").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    write = ToolUseBlock(name="Write", input={"file_path": "note.md", "content": "x\n"})
    read = ToolUseBlock(name="Read", input={"file_path": "note.md"})
    fabricate(Script(steps=[Step(blocks=[write]), Step(blocks=[read])], final_text="Done."),
              tmp_path / "sandbox", {}, "hook")  # fmt: skip
    assert (tmp_path / "sandbox" / "project" / "note.md").is_file()
    assert not any(elsewhere.iterdir()), "a fabricated Write landed in the process's directory"

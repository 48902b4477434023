"""What the agent wrote is hostile: a FIFO, a link or a huge file in a scored folder is read
by the one safe reader (regular files only, no link followed, never blocking, capped), so
scoring a sandbox always ends."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.selftest import run_case
from evalkit.run.sandbox_check import check_sandbox
from evalkit.scoring.safefile import Unreadable, read_capped
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy


def test_the_safe_reader_reads_regular_files_only_and_never_past_its_cap(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_bytes(b"x" * 100)
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "link.md").symlink_to(tmp_path / "note.md")
    assert read_capped(tmp_path / "note.md", 10) == b"x" * 10
    for name in ("pipe.md", "link.md"):
        with pytest.raises(Unreadable):
            read_capped(tmp_path / name)
    with pytest.raises(Unreadable):
        read_capped(tmp_path / "note.md", 10, whole=True)


@pytest.mark.parametrize("scenario", ["P1", "N1"])
def test_a_fifo_written_into_the_vault_never_blocks_check(
    suite: Suite, tmp_path: Path, scenario: str
) -> None:
    note = ToolUseBlock(name="Write", input={"file_path": "x", "content": "x\n"})
    script = Script(steps=[Step(blocks=[note])], final_text="Done.")
    case = SelfTestCase("c", script, Expectation("PASS"))
    run_case(suite, suite.resolve(scenario), case, tmp_path)
    sandbox = tmp_path / suite.resolve(scenario).id / "c"
    os.mkfifo(sandbox / "vault" / "pipe.md")
    found: list[str] = []
    checking = threading.Thread(
        target=lambda: found.append(check_sandbox(suite, sandbox).verdict), daemon=True
    )
    checking.start()
    checking.join(timeout=60)
    assert not checking.is_alive(), "check blocked on a FIFO the agent left"
    assert found and found[0] in ("PASS", "FAIL", "ERROR")

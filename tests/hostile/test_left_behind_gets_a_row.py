"""Whatever the agent leaves in its project gets a row: a nested repository, a submodule, a
socket, a FIFO and a file too large to carry are recorded as what they are in the kept diff,
never an exception that drops the row or stops the grid, and `--resume` finds the rep done."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalkit.records.kept.evidence import folder_diff, replay_folder

pytestmark = pytest.mark.heavy

if TYPE_CHECKING:
    from tests.e2e.conftest import Kit

HUGE = 64 * 1024 * 1024 + 1
"""Larger than any file a kept diff carries (records/kept/diff_index.py: 32 MiB)."""

LEAVE = (
    "git init -q sub && echo kept > sub/note.txt; "
    "git init -q lib && git -C lib -c user.name=a -c user.email=a@b commit -q --allow-empty -m x; "
    "git -c protocol.file.allow=always submodule add -q ./lib lib2; "
    "mkfifo pipe; python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")'; "
    f"truncate -s {HUGE} huge.bin; true"
)


def _left_behind(folder: Path) -> None:
    """What LEAVE leaves, made here without a CLI (a device node too, where one can be)."""
    subprocess.run(["git", "init", "-q", str(folder / "sub")], check=True)
    (folder / "sub" / "note.txt").write_text("kept\n")
    (folder / "lib2").mkdir()
    (folder / "lib2" / ".git").write_text("gitdir: ../.git/modules/lib2\n")
    os.mkfifo(folder / "pipe")
    socket.socket(socket.AF_UNIX).bind(str(folder / "sock"))
    with open(folder / "huge.bin", "wb") as handle:
        handle.truncate(HUGE)
    try:
        os.mknod(folder / "dev", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError:
        pass


def _unblocked(work: Callable[[], bytes], fifo: Path, wait: float = 30.0) -> bytes:
    """work() on a thread; one that blocks on the FIFO past `wait` is released (a writer
    opened and closed on it) and the test fails saying so, rather than hanging."""
    done: list[bytes] = []
    worker = threading.Thread(target=lambda: done.append(work()), daemon=True)
    worker.start()
    worker.join(wait)
    blocked = worker.is_alive()
    while worker.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(0.5)
    assert not blocked, "the diff blocked on a FIFO"
    assert done, "the diff raised"
    return done[0]


def test_a_folder_holding_repositories_and_special_files_diffs_and_replays(
    tmp_path: Path,
) -> None:
    fixture, after = tmp_path / "fixture", tmp_path / "after"
    fixture.mkdir()
    (fixture / "a.txt").write_text("a\n")
    shutil.copytree(fixture, after)
    _left_behind(after)
    diff = _unblocked(lambda: folder_diff(fixture, after), after / "pipe")
    header = [x for x in diff.decode().splitlines() if x.startswith("# left out")]
    named = {json.loads(x.split(": ", 1)[1].rsplit(" (", 1)[0]) for x in header}
    expected = {"sub/.git", "lib2/.git", "pipe", "sock", "huge.bin"}
    expected |= {"dev"} if (after / "dev").exists() else set()
    assert named == expected
    replay_folder(fixture, diff, tmp_path / "replay")
    assert (tmp_path / "replay" / "sub" / "note.txt").read_text() == "kept\n"


@pytest.mark.e2e
def test_a_rep_that_leaves_repositories_and_special_files_is_recorded_and_resumes(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    from evalkit.suite.scaffold import init_suite

    suite = tmp_path / "suite"
    init_suite(suite, "blank")
    scenario = suite / "scenarios" / "P1-L1-greeting.md"
    text = scenario.read_text()
    scenario.write_text(text.replace("  oracle:\n", "  oracle:\n    - bash: " +
                                     json.dumps(LEAVE) + "\n", 1))  # fmt: skip
    kit = new_kit(tmp_path / "kit", suite=suite)
    work = tmp_path / "w"
    args = ("grid", str(work), "--models", "policy:oracle", "--scenarios", "P1-L1-greeting",
            "--allow-unfrozen")
    first = kit.run(*args)
    assert first.returncode == 0, first.why()
    rows = kit.tsv(work)
    assert len(rows) == 1 and rows[0]["verdict"] != "ERROR", [r["reasons"] for r in rows]
    (line,) = kit.manifest(work)
    diff = (work / line["evidence"] / line["files"]["project_diff"]).read_text()
    for name in ("sub/.git", "lib2/.git", "pipe", "sock", "huge.bin"):
        assert f'"{name}"' in diff.split("diff --git", 1)[0], name
    resumed = kit.run(*args, "--resume")
    assert resumed.returncode == 0, resumed.why()
    assert len(kit.tsv(work)) == 1

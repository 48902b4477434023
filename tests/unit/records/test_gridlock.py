"""One grid per results folder: a second is refused naming the first; a dead one's lock is taken."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.records.folder.gridlock import GridBusyError
from evalkit.records.folder.workdir import Workdir

pytestmark = pytest.mark.heavy

HOLDER = """
import sys, time
from pathlib import Path
from evalkit.records.folder.workdir import Workdir
with Workdir(Path(sys.argv[1])).hold_grid("grid --models policy:oracle --reps 2"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_grid_is_refused_and_told_who_holds_the_folder(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(GridBusyError) as caught:
            with Workdir(tmp_path).hold_grid("grid --resume"):
                pass
        message = str(caught.value)
        assert f"pid {holder.pid} on {socket.gethostname()}" in message
        assert "evalkit grid --models policy:oracle --reps 2" in message
        assert caught.value.exit_code == 2
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_of_a_grid_that_died_is_taken_over_with_a_note(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = {"pid": dead.pid, "host": socket.gethostname(), "started": "then", "command": "grid"}
    (tmp_path / "grid.lock").write_text(json.dumps(left))
    notes: list[str] = []
    with Workdir(tmp_path).hold_grid("grid --resume", notes):
        assert json.loads((tmp_path / "grid.lock").read_text())["command"] == "grid --resume"
    assert notes == [
        f"took over the grid lock left by pid {dead.pid} on {socket.gethostname()}, started "
        "then: evalkit grid (no longer running)"
    ]
    assert not (tmp_path / "grid.lock").exists(), "the lock is released when the grid ends"


def test_the_lock_is_re_entrant_within_one_process(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    with records.hold_grid("grid"), records.hold_grid("grid"):
        assert (tmp_path / "grid.lock").exists()
    assert not (tmp_path / "grid.lock").exists()


def test_a_claimed_but_unrecorded_rep_folder_is_set_aside(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    folder = records.claim_evidence_folder("r1", "P1", "policy:oracle", 2)
    (folder / "transcript.jsonl").write_text("half")
    [aside] = records.set_aside("r1", "P1", "policy:oracle", 2)
    assert aside.name.startswith("rep-2.abandoned-")
    assert (aside / "transcript.jsonl").read_text() == "half"
    assert records.claim_evidence_folder("r1", "P1", "policy:oracle", 2).is_dir()

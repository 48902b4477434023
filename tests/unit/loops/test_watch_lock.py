"""A second watch of one WORKDIR is refused in one line naming the first, before it tests
the release again or touches the cursor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import evalkit.loops.watch as watch_module
from evalkit.errors import RefusedError
from evalkit.loops.releases import Listing
from evalkit.loops.watch import CURSOR_NAME, WatchRequest, watch
from evalkit.records.folder.workdir import Workdir
from evalkit.suite.config import Suite

HOLD = """
import sys
from pathlib import Path
from evalkit.records.folder.gridlock import hold_grid_lock
with hold_grid_lock(Path(sys.argv[1]), "watch --agent claude", what="watch"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_watch_of_one_folder_is_refused_naming_the_first(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "watch"
    work.mkdir()
    pins = tmp_path / "pins.toml"
    pins.write_text('[agents]\nclaude = "2.1.327"\n', encoding="utf-8")
    monkeypatch.setattr(watch_module, "listing", lambda *_: Listing(["2.1.327", "2.1.328"]))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(Workdir(work).grid_lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        request = WatchRequest(suite, "claude", ["policy:oracle"], workdir=work, pins=pins)
        with pytest.raises(RefusedError, match="another watch is running") as refused:
            watch(request)
        assert "\n" not in str(refused.value)
        assert not (work / CURSOR_NAME).exists()
    finally:
        holder.communicate("", timeout=30)

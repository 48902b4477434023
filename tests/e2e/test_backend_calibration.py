"""The root suite's calibration under each other backend (Docker, Podman, srt) through the
real CLI: every cell comes out as the calibration expects of bubblewrap's, every row declares
the backend that confined it, and nothing lands in HOME or stays in the scratch folder.

Whole-suite calibrations, so `make calibrate-suites` only (`slow`)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from evalkit.run.backends import backend
from tests.e2e.test_calibrate import evalkit, world

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def _available(name: str) -> None:
    """Skips where the backend cannot confine here, but fails under CI=true, which installs
    and starts every one."""
    missing = backend(name).unavailable()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)


@pytest.mark.parametrize("name", ["docker", "podman", "srt"])
def test_the_root_suites_calibration_under_each_backend_keeps_every_cell(
    claude_cli: str, tmp_path: Path, name: str
) -> None:
    _available(name)
    env = world(tmp_path)
    work = tmp_path / "work"
    done = evalkit(env, REPO, "calibrate", "--set", "run", "--jobs", "2", "--confine", name,
                   str(work))  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    verified = evalkit(env, REPO, "verify", str(work))
    [line] = [x for x in verified.stdout.splitlines() if x.startswith("CALIBRATION: ")]
    matched, total = line.split()[1].split("/")
    assert matched == total, verified.stdout[-4000:]
    lines = [json.loads(x) for x in (work / "manifest.jsonl").read_text().splitlines()]
    assert {x["declarations"].get("confinement") for x in lines} == {name}
    with (work / "results.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == int(total) > 0  # a retried attempt adds a manifest line, not a row
    assert not any((tmp_path / "home").iterdir()), "a rep wrote into HOME"
    assert list((tmp_path / "scratch").iterdir()) == [], "scratch left behind"

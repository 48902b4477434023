"""A place that cannot take what evalkit writes is one line, never an internal error: a full
disk (`/dev/full`) or a read-only one, and a reader that stopped early (`| head`) is a quiet
exit 141, as the shell reports it."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from evalkit.cli.app import BROKEN_PIPE, PLACE_ERROR, guarded_call

pytestmark = pytest.mark.heavy

REPO = Path(__file__).resolve().parents[2]
EVALKIT = Path(sys.executable).parent / "evalkit"


def test_a_full_disk_under_stdout_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [str(EVALKIT), "--suite", str(REPO), "list"], stdout=full, stderr=subprocess.PIPE,
            text=True, timeout=120,
        )  # fmt: skip
    said = done.stderr.strip().splitlines()
    assert done.returncode == PLACE_ERROR, done.returncode
    assert len(said) == 1 and "No space left" in said[0] and "internal error" not in said[0]


def test_a_reader_that_stops_early_is_a_quiet_141() -> None:
    job = subprocess.Popen(
        [str(EVALKIT), "--suite", str(REPO), "list"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert job.stdout is not None and job.stderr is not None
    job.stdout.close()
    code = job.wait(timeout=120)
    assert code == BROKEN_PIPE and job.stderr.read() == "", code


def test_a_read_only_folder_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def write() -> None:
        raise OSError(errno.EROFS, "Read-only file system", "/results/w/results.tsv")

    with pytest.raises(typer.Exit) as stopped:
        guarded_call(write)
    said = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.exit_code == PLACE_ERROR
    assert said == ["evalkit: /results/w/results.tsv: Read-only file system"]

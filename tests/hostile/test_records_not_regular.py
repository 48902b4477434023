"""A records file that is not a regular file (a FIFO, a link) is refused in one line by every
command that reads or writes it; none of them blocks on it, and no row goes into it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate

pytestmark = pytest.mark.heavy

WAIT = 30.0


def _folder(mini_root: Path, tmp_path: Path) -> Path:
    suite = Suite(mini_root)
    work = tmp_path / "w"
    fabricate(suite, work, "sonnet", declared={"suite": suite.name})
    return work


def _fifo_in_place(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _invoke(args: list[str], fifo: Path) -> tuple[Result | None, bool]:
    """The command in this process, and whether it blocked: one that waits on the FIFO past
    WAIT is released (a writer opened and closed on it) so the test ends and says so."""
    done: list[Result] = []
    worker = threading.Thread(target=lambda: done.append(CliRunner().invoke(app, args)))
    worker.start()
    worker.join(WAIT)
    blocked = worker.is_alive()
    while worker.is_alive():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        worker.join(0.5)
    return (done[0] if done else None), blocked


def _refused_in_one_line(result: Result | None, blocked: bool, name: str) -> None:
    assert not blocked, f"blocked on {name}"
    assert result is not None and result.exit_code == 2, (name, result and result.exit_code)
    said = [x for x in result.output.splitlines() if "not a regular file" in x]
    assert len(said) == 1 and name in said[0] and "internal error" not in result.output


@pytest.mark.parametrize("command", ["report", "verify"])
@pytest.mark.parametrize("name", ["results.tsv", "plans.jsonl", "manifest.jsonl", "verified.json"])
def test_a_fifo_in_place_of_a_record_is_refused_without_blocking(
    mini_root: Path, tmp_path: Path, command: str, name: str
) -> None:
    work = _folder(mini_root, tmp_path)
    _fifo_in_place(work / name)
    result, blocked = _invoke(["--suite", str(mini_root), command, str(work)], work / name)
    _refused_in_one_line(result, blocked, name)


def test_a_results_file_that_is_a_link_is_refused(mini_root: Path, tmp_path: Path) -> None:
    work = _folder(mini_root, tmp_path)
    elsewhere = tmp_path / "elsewhere.tsv"
    os.replace(work / "results.tsv", elsewhere)
    (work / "results.tsv").symlink_to(elsewhere)
    result, blocked = _invoke(["--suite", str(mini_root), "report", str(work)], elsewhere)
    _refused_in_one_line(result, blocked, "results.tsv")


@pytest.mark.parametrize("name", ["results.tsv", "plans.jsonl", "grid.lock"])
def test_a_grid_into_a_folder_with_a_fifo_record_is_refused_before_its_plan(
    mini_root: Path, tmp_path: Path, name: str
) -> None:
    work = tmp_path / "g"
    work.mkdir()
    _fifo_in_place(work / name)
    args = ["--suite", str(mini_root), "grid", str(work), "--models", "policy:oracle",
            "--scenarios", "P1-L1-demo", "--allow-unfrozen"]  # fmt: skip
    result, blocked = _invoke(args, work / name)
    _refused_in_one_line(result, blocked, name)
    assert not (work / "evidence").exists()

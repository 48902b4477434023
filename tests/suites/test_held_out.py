"""The Task blocks are the measurement: only `run` reads them, and nothing prints them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.conftest import REPO


def tasks(suite: Suite) -> dict[str, str]:
    return {s.id: read_task(s) for s in suite.scenarios("all")}


def repo_files() -> list[Path]:
    """Tracked and untracked files, less results/: a kept transcript may quote its prompt."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [REPO / p for p in listed if (REPO / p).is_file() and not p.startswith("results/")]


def test_each_task_appears_only_in_its_own_file(suite: Suite) -> None:
    owners = {s.id: s.path for s in suite.scenarios("all")}
    leaks = []
    for path in repo_files():
        text = path.read_bytes().decode("utf-8", "replace")
        for sid, task in tasks(suite).items():
            if path != owners[sid] and task[:80] in text:
                leaks.append(f"{sid} -> {path.relative_to(REPO)}")
    assert leaks == [], "Task text found outside its scenario file"


def test_only_the_runner_reads_a_task_block() -> None:
    readers = sorted(
        p.relative_to(REPO).as_posix()
        for p in (REPO / "evalkit").rglob("*.py")
        if "read_task" in p.read_text()
    )
    # The skill-creator import writes Tasks from an author's own file, and reads each back
    # from its temporary copy, before writing, to prove it reads back whole; it reads no
    # scenario of a suite.
    assert readers == ["evalkit/run/rep.py", "evalkit/suite/skill_creator.py",
                       "evalkit/suite/task.py"]  # fmt: skip


def test_no_command_output_contains_a_task(
    suite: Suite, tmp_path: Path, self_test_command: tuple[int, str, str]
) -> None:
    runner = CliRunner()
    outputs = [self_test_command[1] + self_test_command[2]]
    for args in (
        ["list", "--set", "all"],
        ["list", "--set", "all", "--json"],
        ["--help"],
        ["sandbox", "P1", str(tmp_path / "s")],
        ["check", str(tmp_path / "s")],
        ["check", str(tmp_path / "s"), "--json"],
    ):
        result = runner.invoke(app, ["--suite", str(REPO), *args], env={"COLUMNS": "300"})
        outputs.append(result.stdout + result.stderr)
    joined = "\n".join(outputs)
    leaked = [sid for sid, task in tasks(suite).items() if task[:60] in joined]
    assert leaked == [], "a command printed Task text"


def test_the_scenario_model_has_no_task_field(suite: Suite) -> None:
    for sf in suite.scenarios("all"):
        assert "## Task" not in sf.prose
        assert read_task(sf)[:60] not in sf.scenario.model_dump_json()


def test_only_the_report_page_and_the_inspect_export_mask_with_task_lines() -> None:
    users = sorted(
        p.relative_to(REPO).as_posix()
        for p in (REPO / "evalkit").rglob("*.py")
        if "task_mask(" in p.read_text()
    )
    assert users == [
        "evalkit/exports/inspect_log.py",
        "evalkit/records/pages/html.py",
        "evalkit/suite/task.py",
    ]

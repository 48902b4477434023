"""`--junit FILE` on report, verify and gate goes through the page-target rule: it never
writes over a records file of the folder or a file of the suite, and a path it cannot write is
one line, not an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate

pytestmark = pytest.mark.heavy

COMMANDS = ("report", "verify", "gate")


def _folders(mini_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    suite = Suite(mini_root)
    a, b = tmp_path / "a", tmp_path / "b"
    fabricate(suite, a, "sonnet", declared={"suite": suite.name})
    fabricate(suite, b, "sonnet", declared={"suite": suite.name})
    return a, b


def _invoke(mini_root: Path, command: str, a: Path, b: Path, junit: Path) -> tuple[int, str]:
    folders = [str(a), str(b)] if command == "gate" else [str(b)]
    done = CliRunner().invoke(
        app, ["--suite", str(mini_root), command, *folders, "--junit", str(junit)]
    )
    return done.exit_code, done.output


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("target", ["results.tsv", "manifest.jsonl"])
def test_junit_refuses_a_records_file_of_the_folder_and_leaves_it_whole(
    mini_root: Path, tmp_path: Path, command: str, target: str
) -> None:
    a, b = _folders(mini_root, tmp_path)
    path = b / target
    before = path.read_bytes()
    code, said = _invoke(mini_root, command, a, b, path)
    assert path.read_bytes() == before, f"{command} --junit overwrote {target}"
    assert code == 2 and "which evalkit reads" in said, (code, command, target)


@pytest.mark.parametrize("command", COMMANDS)
def test_junit_refuses_a_scenario_file_of_the_suite(
    mini_root: Path, tmp_path: Path, command: str
) -> None:
    a, b = _folders(mini_root, tmp_path)
    scenario = next((mini_root / "scenarios").glob("*.md"))
    before = scenario.read_bytes()
    code, said = _invoke(mini_root, command, a, b, scenario)
    assert scenario.read_bytes() == before, f"{command} --junit overwrote {scenario.name}"
    assert code == 2 and "the suite's scenarios" in said, (code, command)


@pytest.mark.parametrize("command", COMMANDS)
def test_junit_under_a_file_is_one_line_not_an_internal_error(
    mini_root: Path, tmp_path: Path, command: str
) -> None:
    a, b = _folders(mini_root, tmp_path)
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x\n")
    code, said = _invoke(mini_root, command, a, b, blocker / "out.xml")
    assert code == 2 and "internal error" not in said and said.count("\n") == 1, (code, said)


def test_junit_replaces_the_junit_file_an_earlier_run_left(
    mini_root: Path, tmp_path: Path
) -> None:
    a, b = _folders(mini_root, tmp_path)
    junit = tmp_path / "report.xml"
    assert _invoke(mini_root, "report", a, b, junit)[0] == 0
    assert _invoke(mini_root, "report", a, b, junit)[0] == 0 and junit.stat().st_size > 0

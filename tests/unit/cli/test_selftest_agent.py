"""`self-test --agent`: a cell the agent's stream cannot show is printed BLIND with what the
stream lost and does not fail the command; an unknown agent is one line and exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from tests.conftest import REPO
from tests.e2e.conftest import copy_suite

pytestmark = pytest.mark.heavy

runner = CliRunner()
WIDE = {"COLUMNS": "200"}


def test_a_blind_cell_is_named_with_what_the_stream_lost_and_passes(tmp_path: Path) -> None:
    source = REPO / "suites" / "adr-discrimination"
    suite = copy_suite(tmp_path / "adr", {"P1"}, source)
    shutil.copy2(source / "judge-phantom-rubric.md", suite / "judge-phantom-rubric.md")
    args = ["--suite", str(suite), "self-test", "--agent", "gemini"]
    result = runner.invoke(app, args, env=WIDE)
    assert result.exit_code == 0, result.output[-2000:]
    blind = [line for line in result.output.splitlines() if line.startswith("BLIND")]
    assert {line.split()[2] for line in blind} == {"lookup-rejected", "other-plugin-skill"}
    assert "gemini's stream cannot show a shell command's exit status" in result.output
    assert not any(line.startswith("WRONG") for line in result.output.splitlines())


def test_an_unknown_agent_is_one_line_and_exit_2() -> None:
    result = runner.invoke(app, ["--suite", str(REPO), "self-test", "--agent", "cursor"], env=WIDE)
    assert result.exit_code == 2 and "cursor" in result.output

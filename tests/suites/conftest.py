"""What several suite tests read of the shipped suite's self-test, computed once a session
(in an isolated world of its own: session fixtures set up before the per-test one)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.reference.selftest import Cell, self_test
from evalkit.suite.config import Suite
from tests.conftest import REPO, isolate


@pytest.fixture(scope="session")
def self_test_cells(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> list[Cell]:
    """Every self-test cell of both sets of the shipped suite, played in this process."""
    with pytest.MonkeyPatch.context() as patch:
        isolate(tmp_path_factory, patch)
        return self_test(suite)


@pytest.fixture(scope="session")
def self_test_command(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, str]:
    """`evalkit self-test` of the shipped suite: (exit code, stdout, stderr)."""
    with pytest.MonkeyPatch.context() as patch:
        isolate(tmp_path_factory, patch)
        result = CliRunner().invoke(
            app, ["--suite", str(REPO), "self-test"], env={"COLUMNS": "300"}
        )
    return result.exit_code, result.stdout, result.stderr

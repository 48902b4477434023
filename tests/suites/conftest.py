"""What several suite tests read of the shipped suite's self-test, computed once a session
(in an isolated world of its own: session fixtures set up before the per-test one)."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.reference.selftest import CaseCell, self_test
from evalkit.suite.config import Suite
from tests.conftest import REPO, isolate


def once_for_all_workers(
    factory: pytest.TempPathFactory, name: str, make: Callable[[], Any]
) -> Any:
    """make(), a JSON value, computed by the first pytest-xdist worker that asks and read by
    the others from beside their temp roots (under a lock); without xdist, just make()."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return make()
    shared = factory.getbasetemp().parent
    path = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            path.write_text(json.dumps(make()), encoding="utf-8")
        return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def self_test_cells(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> list[CaseCell]:
    """Every self-test cell of both sets of the shipped suite, played in this process."""
    with pytest.MonkeyPatch.context() as patch:
        isolate(tmp_path_factory, patch)
        return self_test(suite)


@pytest.fixture(scope="session")
def self_test_command(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, str]:
    """`evalkit self-test` of the shipped suite: (exit code, stdout, stderr)."""

    def make() -> list[Any]:
        with pytest.MonkeyPatch.context() as patch:
            isolate(tmp_path_factory, patch)
            result = CliRunner().invoke(
                app, ["--suite", str(REPO), "self-test"], env={"COLUMNS": "300"}
            )
        return [result.exit_code, result.stdout, result.stderr]

    code, stdout, stderr = once_for_all_workers(tmp_path_factory, "self-test-command", make)
    return int(code), str(stdout), str(stderr)

"""What several suite tests read of the shipped suite's self-test, computed once a session
(in an isolated world of its own: session fixtures set up before the per-test one)."""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.reference import selftest
from evalkit.reference.selftest import CaseCell
from tests.conftest import REPO, isolate


def once_for_all_workers(
    factory: pytest.TempPathFactory, name: str, make: Callable[[], Any]
) -> Any:
    """make(), a picklable value, computed by the first pytest-xdist worker that asks and read
    by the others from beside their temp roots (under a lock); without xdist, just make()."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return make()
    shared = factory.getbasetemp().parent
    path = shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            path.write_bytes(pickle.dumps(make()))
        return pickle.loads(path.read_bytes())  # written above by this session's own workers


SelfTestPlayed = tuple[int, str, str, list[CaseCell]]
"""`evalkit self-test` of the shipped suite: exit code, stdout, stderr, and the cells the
command scored (one play serves the tests of the cells and those of the command)."""


@pytest.fixture(scope="session")
def self_test_played(tmp_path_factory: pytest.TempPathFactory) -> SelfTestPlayed:
    def make() -> SelfTestPlayed:
        played: list[CaseCell] = []
        real = selftest.self_test

        def keep(*args: Any, **kwargs: Any) -> list[CaseCell]:
            cells = real(*args, **kwargs)
            played.extend(cells)
            return cells

        with pytest.MonkeyPatch.context() as patch:
            isolate(tmp_path_factory, patch)
            patch.setattr(selftest, "self_test", keep)
            result = CliRunner().invoke(
                app, ["--suite", str(REPO), "self-test"], env={"COLUMNS": "300"}
            )
        assert played, f"`evalkit self-test` scored no cell: {result.output[-2000:]}"
        return result.exit_code, result.stdout, result.stderr, played

    played: SelfTestPlayed = once_for_all_workers(tmp_path_factory, "self-test-played", make)
    return played


@pytest.fixture(scope="session")
def self_test_cells(self_test_played: SelfTestPlayed) -> list[CaseCell]:
    """Every self-test cell of both sets of the shipped suite."""
    return self_test_played[3]


@pytest.fixture(scope="session")
def self_test_command(self_test_played: SelfTestPlayed) -> tuple[int, str, str]:
    """`evalkit self-test` of the shipped suite: (exit code, stdout, stderr)."""
    code, stdout, stderr, _ = self_test_played
    return code, stdout, stderr

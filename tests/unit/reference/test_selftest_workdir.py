"""self-test WORKDIR keeps the sandboxes of the cells that fail, and only those."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

import pytest

import evalkit.reference.selftest as selftest_module
from evalkit.checkers.behaviour import Expectation
from evalkit.errors import ConfigError, RefusedError
from evalkit.models import Verdict
from evalkit.reference.selftest import self_test
from evalkit.suite.config import Suite
from tests.e2e.conftest import copy_suite

pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def one_scenario(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return Suite(copy_suite(tmp_path_factory.mktemp("suite"), only={"P1"}))


def test_only_the_sandboxes_of_failing_cells_are_kept(
    one_scenario: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = selftest_module.meets

    def errors_fail(verdict: Verdict, expect: Expectation) -> bool:
        return expect.verdict != "ERROR" and real(verdict, expect)

    monkeypatch.setattr(selftest_module, "meets", errors_fail)
    cells = self_test(one_scenario, tmp_path / "kept", which="run")
    failing = sorted(c.case for c in cells if not c.ok)
    assert failing and len(failing) < len(cells)
    kept = sorted(p.name for p in (tmp_path / "kept" / "P1-L1-reporting").iterdir())
    assert kept == failing


def test_a_self_test_that_passes_keeps_nothing(one_scenario: Suite, tmp_path: Path) -> None:
    cells = self_test(one_scenario, tmp_path / "kept", which="run")
    assert all(c.ok for c in cells)
    assert list((tmp_path / "kept").iterdir()) == []


def test_a_scenario_that_does_not_read_leaves_no_scratch_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_suite(tmp_path / "suite", only={"P1"})
    scenario = next((root / "scenarios").glob("P1*.md"))
    scenario.write_text(scenario.read_text().replace("polarity: positive", "polarity: sideways"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(ConfigError, match="polarity"):
        self_test(Suite(root), tmp_path / "kept")
    assert list(scratch.iterdir()) == [] and not (tmp_path / "kept").exists()


def test_a_second_self_test_into_the_same_workdir_is_refused(
    one_scenario: Suite, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    fd = os.open(kept / selftest_module.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(RefusedError, match="another self-test is running in this folder"):
            self_test(one_scenario, kept, which="run")
    finally:
        os.close(fd)
    assert [p.name for p in kept.iterdir()] == [selftest_module.LOCK]

"""`verify --strict` turns NOT PUBLISHABLE into a failing exit; without it a folder that
re-derives exits 0 whatever its publishability, as a CI step that keeps its page wants."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.models import PlanCell
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from tests.unit.records.folder import context, record_rep

pytestmark = pytest.mark.heavy

runner = CliRunner()


@pytest.fixture(scope="module")
def errored(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One rep whose transcript was cut before its result: an ERROR row that re-derives."""
    work = tmp_path_factory.mktemp("errored") / "work"
    ctx = context(suite, work)
    record_plan(ctx, [PlanCell(scenario="P1-L1-reporting", model="policy:fault-cut", reps=1)], "x")
    record_rep(ctx, "P1-L1-reporting", "policy:fault-cut", 1, case_name="cut-before-result")
    return work


def _verify(suite: Suite, work: Path, *flags: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--suite", str(suite.root), "verify", str(work), *flags])
    return result.exit_code, result.stdout


def test_without_strict_a_folder_that_re_derives_exits_0_though_not_publishable(
    suite: Suite, errored: Path
) -> None:
    code, stdout = _verify(suite, errored)
    assert "NOT PUBLISHABLE" in stdout and code == 0, errored


def test_strict_exits_1_on_not_publishable(suite: Suite, errored: Path) -> None:
    code, stdout = _verify(suite, errored, "--strict")
    assert "NOT PUBLISHABLE" in stdout and code == 1, errored

"""How far a rate's ERROR rows could move it is in every report format: the table, Markdown
and JSON (the page's is held by the browser test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.models import VerdictValue
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate

pytestmark = pytest.mark.heavy


def first_rep_errors(_: str, __: str, rep: int) -> VerdictValue:
    return "ERROR" if rep == 1 else "FAIL" if rep == 2 else "PASS"


def _rates(value: Any) -> Iterator[dict[str, Any]]:
    """Every rate of a JSON report that counts an ERROR row, wherever it sits."""
    if isinstance(value, dict):
        if "errors_as_pass" in value and value.get("errors"):
            yield value
        for inner in value.values():
            yield from _rates(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _rates(inner)


def _report(suite: Suite, work: Path, fmt: str) -> str:
    done = CliRunner().invoke(
        app, ["--suite", str(suite.root), "report", str(work), "--format", fmt],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert done.exit_code == 0, f"report --format {fmt} exited {done.exit_code}"
    return done.stdout


def test_every_format_says_how_far_the_errors_could_move_a_rate(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", first_rep_errors, reps=3)
    rates = list(_rates(json.loads(_report(suite, work, "json"))))
    assert rates and all(r["errors_as_pass"] > r["k"] / r["n"] for r in rates)
    said_md = "had they passed" in _report(suite, work, "markdown")
    said_table = "ERROR as pass" in _report(suite, work, "table")
    assert said_md, "the Markdown report does not say how far the ERROR rows could move a rate"
    assert said_table, "the table does not say how far the ERROR rows could move a rate"

"""The blank template's commented `order:` example, uncommented, self-tests as designed in
every cell (the generated `tool: Read` step that names no file is the tool's error, as the
CLI's would be; the always-acting agent's appended CHANGELOG line is placed at the Bash call
that wrote it), never an internal error nor an unplaced order."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.suite.scaffold import init_suite

pytestmark = pytest.mark.heavy

COMMENTED = "      # b:\n      #   order: [{tool: Read}, {file: {changed: CHANGELOG.md}}]"
UNCOMMENTED = "      b:\n        order: [{tool: Read}, {file: {changed: CHANGELOG.md}}]"


def test_the_uncommented_order_example_self_tests_without_an_internal_error(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "s"
    init_suite(suite, "blank")
    config = suite / "evalkit.yaml"
    text = config.read_text()
    assert COMMENTED in text
    config.write_text(text.replace(COMMENTED, UNCOMMENTED))
    for other in [*suite.glob("scenarios-reserve/*.md"), *suite.glob("scenarios/N*.md")]:
        other.unlink()  # the positive the example is about is enough
    done = CliRunner().invoke(app, ["--suite", str(suite), "self-test", str(tmp_path / "st")])
    assert "internal error" not in done.output, done.exit_code
    assert done.exit_code == 0 and "self-test:" not in done.output, done.exit_code

"""Refusals that come first and in one line: bisect refuses an unknown policy or a real model
with no credential before its first rep (an endpoint's oracle rep used to write rows first);
a CLI cache given as a file is named, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.suite.config import load_suite
from evalkit.suite.lock import freeze

pytestmark = pytest.mark.heavy

CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
               "ANTHROPIC_BASE_URL")  # fmt: skip


@pytest.mark.parametrize("model", ["policy:nope", "sonnet"])
def test_bisect_refuses_in_one_line_and_writes_nothing(
    mini_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    freeze(load_suite(mini_root))
    work = tmp_path / "b"
    done = CliRunner().invoke(app, [
        "--suite", str(mini_root), "bisect", str(work), "--good", "2.1.326", "--bad", "2.1.328",
        "--model", model, "--scenarios", "P1", "--versions", "2.1.326,2.1.327,2.1.328",
    ])  # fmt: skip
    assert done.exit_code == 2, done.exit_code
    assert len(done.output.strip().splitlines()) == 1, model
    assert not work.exists(), work


def test_a_cli_cache_that_is_a_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.errors import PrerequisiteError
    from evalkit.run.prerequisites import cli_versions

    cache = tmp_path / "cache"
    cache.write_text("")
    monkeypatch.setenv(cli_versions.CACHE_ENV, str(cache))
    with pytest.raises(PrerequisiteError, match="is not a folder"):
        cli_versions.install("2.1.326")
    assert cache.is_file()

"""One reader of a results folder for every export: a mistyped folder, a file, or a folder
without rows is refused in the same words whichever format was asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError, NotFoundError
from evalkit.exports.rows import evidence_lines, read_rows, summaries


@pytest.mark.parametrize("manifest", [summaries, evidence_lines])
def test_a_folder_that_is_not_there_is_said_to_be_missing(tmp_path: Path, manifest: object) -> None:
    with pytest.raises(NotFoundError, match="no such results folder"):
        read_rows(tmp_path / "typo", manifest)  # type: ignore[arg-type]
    assert not (tmp_path / "typo").exists()


def test_a_file_named_as_the_folder_is_refused_as_a_file(tmp_path: Path) -> None:
    (tmp_path / "results.tsv").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="a file, not a results folder"):
        read_rows(tmp_path / "results.tsv", summaries)


def test_an_empty_folder_has_no_rows_to_export(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no rows to export"):
        read_rows(tmp_path, evidence_lines)

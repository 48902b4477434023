"""A results file from an older evalkit: read by name, appended to only once migrated."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
import evalkit.records.folder.migrate as migrate_module
from evalkit.cli.main import app
from evalkit.errors import ConfigError
from evalkit.models import ResultRow
from evalkit.records.folder.migrate import migrate_workdir
from evalkit.records.folder.results import (
    COLUMNS,
    MAY_BE_ABSENT,
    absent_defaults,
    append_row,
    read_results,
)
from evalkit.records.folder.workdir import Workdir
from tests.conftest import REPO

OLD_HEADER = "scenario\tmodel\ta\tb\tverdict\treasons\trep\trun_id\n"
OLD_ROWS = [
    "P1-L1-reporting\thaiku\tA:PASS\tB:PASS\tPASS\tA-via:written\t1\tr0\n",
    "N1-L1-reporting\thaiku\tA:FAIL\tB:n/a\tFAIL\tvault-write:x.md\t1\tr0\n",
]
NEW = ResultRow(scenario="P1", model="m", a="A:PASS", b="B:PASS", verdict="PASS", reasons="-")


@pytest.fixture
def old(tmp_path: Path) -> Path:
    (tmp_path / "results.tsv").write_text(OLD_HEADER + "".join(OLD_ROWS) + "torn fragment\n")
    return tmp_path


def test_an_older_file_reads_by_header_name_with_stated_defaults(old: Path) -> None:
    read = read_results(old / "results.tsv")
    first = read.plain_rows[0]
    assert (first.scenario, first.reasons, first.rep, first.run_id) == (
        "P1-L1-reporting",
        "A-via:written",
        1,
        "r0",
    )
    defaults = absent_defaults()
    assert (first.bundle_id, first.flags, first.turns) == (
        defaults["bundle_id"],
        defaults["flags"],
        defaults["turns"],
    )
    assert read.problems == ["results.tsv:4: 1 columns, expected 8"]


def test_appending_to_a_file_lacking_an_identifying_column_points_at_migrate(old: Path) -> None:
    before = (old / "results.tsv").read_text()
    with pytest.raises(ConfigError, match=r"lacks bundle_id, attempt\); `evalkit results migrate "):
        append_row(old / "results.tsv", NEW)
    assert (old / "results.tsv").read_text() == before


def test_a_file_lacking_only_descriptive_columns_is_appended_to_in_its_own_columns(
    tmp_path: Path,
) -> None:
    columns = [c for c in COLUMNS if c not in MAY_BE_ABSENT]
    results = tmp_path / "results.tsv"
    results.write_text("\t".join(columns) + "\n")
    append_row(results, NEW)
    header, row = results.read_text().splitlines()
    assert len(row.split("\t")) == len(columns)
    assert read_results(results).plain_rows[0].scenario == "P1"


def test_migrate_rewrites_keeps_a_backup_and_loses_nothing(old: Path) -> None:
    [done] = migrate_workdir(Workdir(old))
    assert done.changed and done.rows == 2 and done.kept_lines == 1
    assert done.backup is not None and done.backup.read_text() == (
        OLD_HEADER + "".join(OLD_ROWS) + "torn fragment\n"
    )
    lines = (old / "results.tsv").read_text().splitlines()
    assert lines[0].split("\t") == COLUMNS
    assert lines[-1] == "torn fragment"
    before = read_results(done.backup).plain_rows
    after = read_results(old / "results.tsv").plain_rows
    assert after == before
    append_row(old / "results.tsv", NEW)
    assert read_results(old / "results.tsv").plain_rows[-1].scenario == "P1"
    [again] = migrate_workdir(Workdir(old))
    assert not again.changed


def test_a_migration_that_would_change_a_row_is_undone(
    old: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = migrate_module.format_row
    monkeypatch.setattr(
        migrate_module, "format_row", lambda row: real(row.model_copy(update={"verdict": "PASS"}))
    )
    with pytest.raises(ConfigError, match="verdict changed in migration"):
        migrate_workdir(Workdir(old))
    assert (old / "results.tsv").read_text() == OLD_HEADER + "".join(OLD_ROWS) + "torn fragment\n"


def test_a_file_with_columns_this_evalkit_does_not_know_is_left_alone(tmp_path: Path) -> None:
    text = OLD_HEADER.replace("\n", "\tfuture\n") + OLD_ROWS[0].replace("\n", "\tx\n")
    (tmp_path / "results.tsv").write_text(text)
    with pytest.raises(ConfigError, match="future"):
        migrate_workdir(Workdir(tmp_path))
    assert (tmp_path / "results.tsv").read_text() == text


def test_the_migrate_command_says_what_it_did(old: Path) -> None:
    result = CliRunner().invoke(
        app, ["--suite", str(REPO), "results", "migrate", str(old)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "2 row(s) rewritten, columns added: flags," in result.stdout
    assert "1 unreadable line(s) kept as they were" in result.stdout


def test_a_renamed_column_reads_under_its_new_name_and_migrates(tmp_path: Path) -> None:
    header = OLD_HEADER.replace("\n", "\tcost_usd\n")
    (tmp_path / "results.tsv").write_text(header + OLD_ROWS[0].replace("\n", "\t0.25\n"))
    [row] = read_results(tmp_path / "results.tsv").plain_rows
    assert row.cost_usd_estimate == 0.25
    with pytest.raises(ConfigError, match=r"old column names cost_usd \(now cost_usd_estimate\)"):
        append_row(tmp_path / "results.tsv", NEW)
    [done] = migrate_workdir(Workdir(tmp_path))
    assert done.changed
    [again] = read_results(tmp_path / "results.tsv").plain_rows
    assert again.cost_usd_estimate == 0.25


def test_a_kept_line_keeps_its_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    kept = b"torn \xff\xfe fragment \xe9t\xe9\r\n"
    old_bytes = (OLD_HEADER + "".join(OLD_ROWS)).encode() + kept
    (tmp_path / "results.tsv").write_bytes(old_bytes)
    [done] = migrate_workdir(Workdir(tmp_path))
    assert done.changed and done.rows == 2 and done.kept_lines == 1
    new_lines = (tmp_path / "results.tsv").read_bytes().splitlines(keepends=True)
    assert new_lines[-1] == kept
    assert done.backup is not None and done.backup.read_bytes() == old_bytes


def _migrate(workdir: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(
        app, ["--suite", str(REPO), "results", "migrate", str(workdir)], env={"COLUMNS": "200"}
    )
    return result.exit_code, result.stderr.strip().splitlines()


def test_migrate_of_a_file_or_a_path_under_one_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x\n")
    for workdir in (tmp_path / "afile", tmp_path / "afile" / "w"):
        code, err = _migrate(workdir)
        assert code == 2 and len(err) == 1 and str(workdir) in err[0], err
    assert (tmp_path / "afile").read_text() == "x\n"


def test_migrate_of_a_folder_that_is_not_there_makes_nothing(tmp_path: Path) -> None:
    code, err = _migrate(tmp_path / "nowhere")
    assert code == 2 and len(err) == 1 and str(tmp_path / "nowhere") in err[0], err
    assert not (tmp_path / "nowhere").exists()


def test_migrate_where_nothing_can_be_written_is_one_line(locked_folder: Path) -> None:
    code, err = _migrate(locked_folder)
    assert code == 2 and len(err) == 1 and str(locked_folder) in err[0], err

"""report on folders that are not what it expects: plans alone, another suite, bad lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.errors import RefusedError
from evalkit.models import Plan, PlanCell
from evalkit.records.folder.results import read_results
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.build import build_report
from evalkit.suite.config import Suite
from tests.conftest import REPO


def _plan(suite: str = "") -> Plan:
    return Plan(
        run_id="r1",
        created="2026-01-01T00:00:00+00:00",
        command="grid",
        cells=[PlanCell(scenario="P1-L1-reporting", model="haiku", reps=2)],
        suite=suite,
    )


def test_a_folder_with_only_plans_shows_the_incomplete_plan(suite: Suite, tmp_path: Path) -> None:
    Workdir(tmp_path).append_plan(_plan())
    got = build_report(suite, tmp_path)
    assert got.rows == 0 and got.incomplete
    assert [(m.scenario, m.planned, m.recorded) for m in got.missing] == [("P1-L1-reporting", 2, 0)]
    result = CliRunner().invoke(
        app, ["--suite", str(REPO), "report", str(tmp_path)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "INCOMPLETE" in result.stdout
    assert "r1 P1-L1-reporting haiku: 2 rep(s) planned, 0 recorded" in result.stdout


def test_report_with_the_wrong_suite_says_so(suite: Suite, tmp_path: Path) -> None:
    Workdir(tmp_path).append_plan(_plan(suite="adr-discrimination"))
    with pytest.raises(RefusedError, match="holds reps of suite adr-discrimination"):
        build_report(suite, tmp_path)


def test_a_garbage_results_line_is_named_and_the_report_goes_on(
    suite: Suite, tmp_path: Path
) -> None:
    Workdir(tmp_path).append_plan(_plan())
    header = "scenario\tmodel\ta\tb\tverdict\treasons\trep\trun_id\n"
    good = "P1-L1-reporting\thaiku\tA:PASS\tB:PASS\tPASS\t-\t1\tr1\n"
    (tmp_path / "results.tsv").write_text(header + good + "garbage\n")
    got = build_report(suite, tmp_path)
    assert got.rows == 1
    assert got.unreadable == ["results.tsv:3: 1 columns, expected 8"]


def test_lines_a_results_file_breaks_oddly_are_numbered_as_before(
    suite: Suite, tmp_path: Path
) -> None:
    Workdir(tmp_path).append_plan(_plan())
    header = "scenario\tmodel\ta\tb\tverdict\treasons\trep\trun_id"
    good = "P1-L1-reporting\thaiku\tA:PASS\tB:PASS\tPASS\t-\t{}\tr1"
    text = f"{header}\r{good.format(1)}\n\nodd\x0bline\r\n{good.format(2)}"
    (tmp_path / "results.tsv").write_bytes(text.encode())
    got = build_report(suite, tmp_path)
    assert got.rows == 2
    assert got.unreadable == [
        "results.tsv:4: 1 columns, expected 8",
        "results.tsv:5: 1 columns, expected 8",
    ]


def test_a_value_repeated_down_the_results_is_held_once(tmp_path: Path) -> None:
    header = "scenario\tmodel\ta\tb\tverdict\treasons\trep\trun_id\n"
    rows = "".join(f"P1-L1-reporting\thaiku\tA:PASS\tB:PASS\tPASS\t-\t{n}\tr1\n" for n in (1, 2))
    (tmp_path / "results.tsv").write_text(header + rows)
    first, second = read_results(tmp_path / "results.tsv").plain_rows
    assert (first.rep, second.rep) == (1, 2)
    assert first.model is second.model and first.run_id is second.run_id


def test_rows_of_one_file_hold_one_set_of_their_fields_and_a_copy_its_own(
    tmp_path: Path,
) -> None:
    header = "scenario\tmodel\ta\tb\tverdict\treasons\trep\trun_id\n"
    rows = "".join(f"P1-L1-reporting\thaiku\tA:PASS\tB:PASS\tPASS\t-\t{n}\tr1\n" for n in (1, 2))
    (tmp_path / "results.tsv").write_text(header + rows)
    first, second = read_results(tmp_path / "results.tsv").plain_rows
    assert first.model_fields_set is second.model_fields_set
    copied = first.model_copy(update={"flags": "unconfined"})
    assert "flags" in copied.model_fields_set and "flags" not in second.model_fields_set


def test_report_reads_the_manifest_and_the_plans_once(
    suite: Suite, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    for name in ("read_plans", "read_evidence_index", "read_manifest_summaries"):
        real = getattr(Workdir, name)

        def counted(self: Workdir, real: Any = real, name: str = name) -> Any:
            reads.append(name)
            return real(self)

        monkeypatch.setattr(Workdir, name, counted)
    build_report(suite, recorded)
    assert sorted(reads) == ["read_manifest_summaries", "read_plans"], reads

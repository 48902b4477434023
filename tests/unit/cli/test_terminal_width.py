"""Reports and the calibration matrix read at 80 columns: no name cut, one row per line."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from evalkit.cli.calibration_table import print_matrix
from evalkit.cli.fit import compact_rate, print_fitted, short_ids
from evalkit.cli.progress import rep_progress
from evalkit.models import ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.report.build import build_report
from evalkit.records.report.tally import rate
from evalkit.reference.policy import policy_names
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy


def _console(width: int) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=width, force_terminal=False, highlight=False), buf


def _demo_like(suite: Suite, work: Path) -> list[str]:
    """What `make demo` records: every policy over every run-set scenario, one rep each."""
    models = [f"policy:{p}" for p in policy_names(suite)]
    work.mkdir()
    for sf in suite.scenarios("run"):
        for model in models:
            fault = "fault" in model
            append_row(
                work / "results.tsv",
                ResultRow(
                    scenario=sf.id, model=model, a="A:PASS", b="B:PASS",
                    verdict="ERROR" if fault else "PASS",
                    reasons="A-via:written;project-write:yes", flags="project-write:yes",
                    rep=1, run_id="r1",
                ),
            )
    return models


def _names_whole(text: str, names: list[str]) -> list[str]:
    """Names that do not appear as a whole token anywhere in text."""
    tokens = set(re.split(r"[\s|,=]+", text))
    return [n for n in names if n not in tokens]


def test_the_demo_report_reads_at_80_columns_with_every_name_whole(
    suite: Suite, tmp_path: Path
) -> None:
    from evalkit.cli.report_tables import print_report

    models = _demo_like(suite, tmp_path / "demo")
    console, buf = _console(80)
    shapes = print_report(console, build_report(suite, tmp_path / "demo"))
    text = buf.getvalue()
    assert "grouped" in shapes  # the level tables changed shape to fit
    assert _names_whole(text, models) == []
    assert "…" not in text
    table_lines = [line for line in text.splitlines() if "%" in line]
    assert table_lines and all(len(line.rstrip()) <= 80 for line in table_lines)
    assert "3/3 44–100%" in text  # compact intervals (the per-model PASS rows)


def test_a_wide_terminal_keeps_the_plain_table(suite: Suite, tmp_path: Path) -> None:
    from evalkit.cli.report_tables import print_report

    _demo_like(suite, tmp_path / "demo")
    console, _ = _console(160)
    shapes = print_report(console, build_report(suite, tmp_path / "demo"))
    assert set(shapes) == {"table"}


def test_a_table_too_wide_even_grouped_is_split_not_cut() -> None:
    columns = ["model", *(f"column-{i}" for i in range(12))]
    rows = [["claude-sonnet-4-5-20250929", *(str(10**i) for i in range(12))]]
    console, buf = _console(80)
    assert print_fitted(console, "usage", columns, rows) == "split"
    text = buf.getvalue()
    assert all(c in text for c in columns) and "claude-sonnet-4-5-20250929" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80


def test_compact_rate_and_short_ids() -> None:
    assert compact_rate(rate([])) == "0/0"
    rows = [ResultRow(scenario="s", model="m", a="", b="", verdict="PASS", reasons="-")] * 3
    assert compact_rate(rate(rows)) == "3/3 44–100%"
    assert short_ids(["P1-L1-x", "N1-L1-x"]) == {"P1-L1-x": "P1", "N1-L1-x": "N1"}
    assert short_ids(["P1-a", "P1-b"]) == {"P1-a": "P1-a", "P1-b": "P1-b"}


def _cell(scenario: str, policy: str, got: str, want: str) -> SimpleNamespace:
    return SimpleNamespace(
        scenario=scenario,
        policy=policy,
        ok=got == want,
        expect=SimpleNamespace(verdict=want),
        outcome=SimpleNamespace(verdict=SimpleNamespace(verdict=got)),
    )


def test_the_calibration_matrix_has_policies_as_rows_and_a_legend(suite: Suite) -> None:
    policies = policy_names(suite)
    ids = [s.id for s in suite.scenarios("all")]
    cells = [_cell(s, p, "PASS", "PASS") for s in ids for p in policies]
    cells[0] = _cell(ids[0], policies[0], "FAIL", "PASS")
    console, buf = _console(80)
    shape = print_matrix(console, cells, policies)  # type: ignore[arg-type]
    text = buf.getvalue()
    assert _names_whole(text, policies + ids) == []
    assert "…" not in text
    assert shape.startswith("letters-")  # twelve scenarios: PASS/FAIL words do not fit
    assert "F≠P" in text
    rows = [line for line in text.splitlines() if line.split(" ")[0] in policies]
    assert len(rows) == len(policies) and all(len(r.rstrip()) <= 80 for r in rows)


def test_progress_prints_plain_lines_when_piped() -> None:
    console, buf = _console(80)

    def outcome(verdict: str, reasons: list[str]) -> SimpleNamespace:
        return SimpleNamespace(
            scenario="P1-L1-reporting", model="policy:breach", rep=1,
            verdict=SimpleNamespace(verdict=verdict, reasons=reasons),
            row=SimpleNamespace(variant="suite"),
        )

    with rep_progress(2, console) as bar:
        bar.done(outcome("FAIL", ["real-vault-breach:Write:/x"]))  # type: ignore[arg-type]
        bar.done(outcome("PASS", []))  # type: ignore[arg-type]
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[1/2] P1-L1-reporting policy:breach rep 1: FAIL")
    assert "PASS 1 FAIL 1 ERROR 0 breaches 1" in lines[1] and "eta" in lines[1]


def test_a_variants_rep_is_named_by_its_variant_in_the_progress_line() -> None:
    console, buf = _console(120)
    made = SimpleNamespace(
        scenario="P1-L1-reporting", model="sonnet", rep=2,
        verdict=SimpleNamespace(verdict="PASS", reasons=[], flags=[]),
        row=SimpleNamespace(variant="terse"),
    )  # fmt: skip
    with rep_progress(1, console) as bar:
        bar.done(made)  # type: ignore[arg-type]
    assert buf.getvalue().startswith("[1/1] P1-L1-reporting sonnet variant terse rep 2: PASS")

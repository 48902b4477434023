"""How positives passed: axis A over every positive, and each PASS by its B route."""

from __future__ import annotations

from pathlib import Path

from evalkit.models import ResultRow, VerdictValue
from evalkit.records.folder.results import append_row
from evalkit.records.report.build import build_report
from evalkit.records.report.text import to_markdown
from evalkit.suite.config import Suite

# (axis A, verdict, reasons) per rep of the run set's L1 positive
REPS: list[tuple[str, VerdictValue, str]] = [
    ("A:PASS", "PASS", "A-via:written;B-via:created"),
    ("A:PASS", "PASS", "A-via:written;B-via:cited-governing"),
    ("A:PASS", "PASS", "A-via:offered"),
    ("A:PASS", "FAIL", "B:off-topic"),
    ("A:FAIL", "FAIL", "-"),
    ("A:PASS", "ERROR", "timeout"),
]


def test_axis_a_counts_every_positive_and_passes_split_by_b_route(
    suite: Suite, tmp_path: Path
) -> None:
    [p1] = [s for s in suite.scenarios("run") if s.id.startswith("P1-")]
    for rep, (axis_a, verdict, reasons) in enumerate(REPS, start=1):
        append_row(
            tmp_path / "results.tsv",
            ResultRow(
                scenario=p1.id, model="m", a=axis_a, b="B:PASS", verdict=verdict,
                reasons=reasons, rep=rep, run_id="r1",
            ),
        )  # fmt: skip
    report = build_report(suite, tmp_path)
    [cell] = report.levels[0].cells
    assert cell.axis_a is not None
    assert (cell.axis_a.k, cell.axis_a.n, cell.axis_a.errors) == (4, 6, 1)
    assert (cell.pass_rate.k, cell.pass_rate.n) == (3, 6)
    assert cell.b_via == {"cited-governing": 1, "created": 1, "none named": 1}
    md = to_markdown(report)
    assert "## How positives passed" in md
    assert "| m | run | L1 | 4/6 [" in md
    assert "| 3 | cited-governing 1, created 1, none named 1 |" in md

"""Report's pooled rates: the scenario-clustered interval as the headline, the rep-level
Wilson interval beside it, and n/a where a cell holds one scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.models import VerdictValue
from evalkit.records.report.build import build_report
from evalkit.records.report.text import to_markdown
from evalkit.stats import clustered_interval
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate


def uneven(scenario: str, polarity: str, rep: int) -> VerdictValue:
    """Positives: P1 and P2 pass every rep, the rest pass one of three, so reps of a scenario
    agree with each other far more than with another scenario's."""
    if polarity == "negative":
        return "PASS"
    return "PASS" if scenario[:2] in ("P1", "P2") or rep == 1 else "FAIL"


def test_a_rate_over_several_scenarios_is_headlined_by_the_clustered_interval(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", uneven, reps=3)
    report = build_report(suite, work)
    [run] = [m for m in report.models if m.set == "run"]
    recall = run.recall
    assert (recall.k, recall.n, recall.scenarios) == (7, 9, 3)
    expected = clustered_interval([(3, 3), (3, 3), (1, 3)])
    assert expected is not None
    assert (recall.clustered_low, recall.clustered_high) == pytest.approx(
        (expected.low, expected.high)
    )
    assert recall.deff == pytest.approx(expected.deff)
    assert recall.headline == "clustered by scenario"
    assert recall.clustered_low is not None and recall.low is not None
    assert recall.clustered_low < recall.low  # wider than reps as independent


def test_a_cell_of_one_scenario_keeps_the_rep_level_interval_labelled(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", uneven, reps=3)
    report = build_report(suite, work)
    cell = report.levels[0].cells[0]
    assert cell.pass_rate.scenarios == 1
    assert cell.pass_rate.clustered_low is None
    assert cell.pass_rate.headline == "reps as independent"
    md = to_markdown(report)
    assert "reps as independent (clustered: n/a (one scenario))" in md
    assert "clustered by scenario (G 3, deff" in md
    assert '"clustered_low"' in report.model_dump_json()

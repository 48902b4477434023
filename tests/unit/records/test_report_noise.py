"""Where a cell's noise comes from: the report's variance components against statsmodels'
`anova_lm` (a committed table), on fabricated folders, to 1e-9; and the sentence for the next
grid."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from evalkit.inference.variance import next_grid, one_way
from evalkit.models import ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.report.build import build_report
from evalkit.records.report.model import REPORT_SCHEMA_VERSION
from evalkit.records.report.text import to_markdown
from evalkit.suite.config import Suite
from tests.minisuite import write_suite

EXPECTED = Path(__file__).parents[1] / "compare" / "expected_values" / "variance_components.csv"
CASES = list(csv.DictReader(EXPECTED.open(encoding="utf-8")))


def _suite_of(root: Path, scenarios: int) -> Suite:
    """The mini suite with `scenarios` positives at L1 in the run set, one negative."""
    write_suite(root)
    first = root / "scenarios" / "P1-L1-demo.md"
    text = first.read_text(encoding="utf-8")
    for i in range(2, scenarios + 1):
        (root / "scenarios" / f"P{i}-L1-demo.md").write_text(
            text.replace("id: P1-L1-demo", f"id: P{i}-L1-demo"), encoding="utf-8"
        )
    return Suite(root)


def _folder(work: Path, counts: list[tuple[int, int]]) -> Path:
    """Rows only: scenario i passes its first k of n reps."""
    work.mkdir(parents=True)
    for i, (k, n) in enumerate(counts, start=1):
        for rep in range(1, n + 1):
            append_row(
                work / "results.tsv",
                ResultRow(
                    scenario=f"P{i}-L1-demo",
                    model="policy:oracle",
                    a="A:PASS",
                    b="B:PASS",
                    verdict="PASS" if rep <= k else "FAIL",
                    reasons="-",
                    rep=rep,
                    run_id="r1",
                    cli_version="2.1.328",
                ),
            )
    return work


def _counts(case: dict[str, str]) -> list[tuple[int, int]]:
    return list(zip(map(int, case["k"].split()), map(int, case["n"].split()), strict=True))


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_the_mean_squares_are_anova_lms(case: dict[str, str]) -> None:
    c = one_way(_counts(case))
    assert c is not None
    assert c.ms_between == pytest.approx(float(case["ms_between"]), rel=0, abs=1e-9)
    assert c.ms_within == pytest.approx(float(case["ms_within"]), rel=0, abs=1e-9)
    assert c.n0 == pytest.approx(float(case["n0"]), rel=0, abs=1e-9)


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_a_fabricated_folders_components_match_statsmodels(
    case: dict[str, str], tmp_path: Path
) -> None:
    counts = _counts(case)
    suite = _suite_of(tmp_path / "suite", len(counts))
    report = build_report(suite, _folder(tmp_path / "work", counts))
    [cell] = [c for t in report.levels for c in t.cells if c.polarity == "positive"]
    noise = cell.noise
    assert noise is not None and noise.scenarios == len(counts)
    for name in ("between", "within", "deff", "effective_n"):
        assert getattr(noise, name) == pytest.approx(float(case[name]), rel=0, abs=1e-9), name
    expected_icc = float(case["icc"])
    if math.isnan(expected_icc):
        assert noise.icc is None
    else:
        assert noise.icc == pytest.approx(expected_icc, rel=0, abs=1e-9)
    assert report.schema_version == REPORT_SCHEMA_VERSION == 2
    assert noise.next_grid in to_markdown(report)


def test_between_scenario_noise_calls_for_scenarios_and_rep_noise_for_reps() -> None:
    scenario_bound = one_way([(10, 10), (10, 10), (0, 10), (0, 10), (10, 10), (0, 10)])
    rep_bound = one_way([(5, 10), (4, 10), (6, 10), (5, 10), (5, 10), (5, 10)])
    assert scenario_bound is not None and rep_bound is not None
    assert "by 29%, 10 more reps of each (60 reps) by 0%" in next_grid(scenario_bound)
    assert "by 29%, 10 more reps of each (60 reps) by 29%" in next_grid(rep_bound)


def test_too_few_scenarios_are_named_with_the_exact_tests_floor() -> None:
    c = one_way([(3, 3), (0, 3), (2, 3)])
    assert c is not None
    sentence = next_grid(c)
    assert "3 scenarios make the between-scenario share a rough estimate" in sentence
    assert "cannot go below 2^-3 = 0.125 > 0.05: no number of reps makes it decide" in sentence
    assert one_way([(1, 1), (0, 1)]) is None  # one rep each: nothing within to measure

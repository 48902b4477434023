"""The usage table prices only real models: a reference policy's tokens were played by the
scripted model, so its cost cell says so instead of the CLI's estimate of a bill nobody pays."""

from __future__ import annotations

from evalkit.records.report.model import Report, Usage
from evalkit.records.report.text import SCRIPTED_COST, USAGE_COLUMNS, usage_rows


def _cost(model: str) -> str:
    usage = Usage(model=model, attempts=3, cost_usd_estimate=3.78)
    row = usage_rows(Report.model_construct(usage=[usage]))[0]
    return row[USAGE_COLUMNS.index("cost USD (CLI estimate)")]


def test_a_reference_policy_costs_nothing() -> None:
    assert _cost("policy:oracle") == SCRIPTED_COST


def test_a_real_model_shows_the_cli_s_estimate() -> None:
    assert _cost("sonnet") == "3.7800"

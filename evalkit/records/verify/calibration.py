"""A calibration folder: what `calibrate` wrote, read as the instrument's proof, not a measurement.

Reference policies, fault modes among them, are played over the scenarios, each cell held to
a verdict stated in advance; a fault policy's ERROR is the result it was built to get. So a
folder whose every plan `calibrate` wrote, with every cell's expected verdict, and whose every
model is a `policy:*` one is read by how many cells came out as expected, never as publishable
or not. Anything else in it (another plan, a real model's row) makes it a measurement again.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from evalkit.models import CellExpectation, Model, Plan, ResultRow
from evalkit.records.rows.policy_models import PREFIX, is_policy

COMMAND = "calibrate"
NOT_A_MEASUREMENT = (
    "a calibration folder: reference policies played to prove the instrument, not a measurement"
)


class CalibratedCell(Model):
    """One reference policy on one scenario: the verdict it had to get, and what it got."""

    run_id: str
    scenario: str
    model: str
    expected: CellExpectation
    got: list[str] = Field(description="the verdict of each row of the cell; empty when none")
    attempts: list[int] = Field(description="the attempt each row came from")
    reasons: list[str] = Field(description="the reasons and flags the rows named")
    as_expected: bool


class Calibration(Model):
    """How a calibration folder's cells came out against the verdicts its plans expected."""

    total: int
    as_expected: int
    headline: str = Field(description="CALIBRATION: k/n cells as expected")
    differ: list[str] = Field(description="one line per cell that came out otherwise")
    expected_errors: list[str] = Field(
        description="one line per fault policy: its rows, ERROR by design"
    )
    cells: list[CalibratedCell]

    @property
    def ok(self) -> bool:
        return self.as_expected == self.total and self.total > 0


def is_calibration_plan(plan: Plan) -> bool:
    """Written by `calibrate`, naming an expected verdict for every cell it planned."""
    if not plan.calibration or plan.command.split(" ", 1)[0] != COMMAND or plan.skipped:
        return False
    expected = {(x.scenario, x.model) for x in plan.expected_verdicts}
    return all((c.scenario, c.model) in expected for c in plan.cells)


def read_calibration(
    plans: list[Plan], rows: list[ResultRow], models: Iterable[str] = ()
) -> Calibration | None:
    """The calibration of a folder holding `plans` and (counted) `rows`, whose manifest
    names `models`; None when the folder is a measurement."""
    if not plans or not all(is_calibration_plan(p) for p in plans):
        return None
    named = {c.model for p in plans for c in p.cells} | {r.model for r in rows} | set(models)
    if not all(is_policy(m) for m in named):
        return None
    by_cell: dict[tuple[str, str, str], list[ResultRow]] = {}
    for row in rows:
        by_cell.setdefault((row.run_id, row.scenario, row.model), []).append(row)
    cells = [
        _check(plan.run_id, expected, by_cell.get((plan.run_id, expected.scenario, expected.model)))
        for plan in plans
        for expected in plan.expected_verdicts
    ]
    several_runs = len({p.run_id for p in plans}) > 1
    matched = sum(1 for c in cells if c.as_expected)
    return Calibration(
        total=len(cells),
        as_expected=matched,
        headline=f"CALIBRATION: {matched}/{len(cells)} cells as expected",
        differ=[_differs(c, several_runs) for c in cells if not c.as_expected],
        expected_errors=_expected_errors(cells),
        cells=cells,
    )


def _tokens(text: str) -> list[str]:
    return [t for t in text.split(";") if t and t != "-"]


def _check(run_id: str, expected: CellExpectation, rows: list[ResultRow] | None) -> CalibratedCell:
    rows = rows or []
    reasons = sorted({t for r in rows for t in _tokens(r.reasons) + _tokens(r.flags)})
    return CalibratedCell(
        run_id=run_id,
        scenario=expected.scenario,
        model=expected.model,
        expected=expected,
        got=[r.verdict for r in rows],
        attempts=[r.attempt for r in rows],
        reasons=reasons,
        as_expected=bool(rows) and all(_meets(r, expected) for r in rows),
    )


def _meets(row: ResultRow, expected: CellExpectation) -> bool:
    if row.verdict != expected.verdict or row.attempt != expected.attempt:
        return False
    named = _tokens(row.reasons) + _tokens(row.flags)
    return expected.reason is None or any(expected.reason in t for t in named)


def _differs(cell: CalibratedCell, with_run: bool) -> str:
    """`<scenario> <policy>: expected <verdict>, got <verdict>`: ids, verdicts, reasons and
    attempts only."""
    want = cell.expected
    attempts = want.attempt != 1 or any(a != 1 for a in cell.attempts)
    expected = want.verdict + (f" ({want.reason})" if want.reason else "")
    expected += f" at attempt {want.attempt}" if attempts else ""
    if not cell.got:
        got = "no row"
    else:
        got = ", ".join(
            verdict + (f" at attempt {attempt}" if attempts else "")
            for verdict, attempt in zip(cell.got, cell.attempts, strict=True)
        )
        got += f" ({';'.join(cell.reasons)})" if want.reason and cell.reasons else ""
    run = f" (run {cell.run_id})" if with_run else ""
    policy = cell.model.removeprefix(PREFIX)
    return f"{cell.scenario} {policy}{run}: expected {expected}, got {got}"


def _expected_errors(cells: list[CalibratedCell]) -> list[str]:
    by_model: dict[str, list[str]] = {}
    for cell in cells:
        if cell.as_expected and cell.expected.verdict == "ERROR":
            by_model.setdefault(cell.model, []).extend([cell.scenario] * len(cell.got))
    return [
        f"expected ERROR {model} {len(ids)} row(s): {', '.join(ids)}"
        for model, ids in by_model.items()
    ]

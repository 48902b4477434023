"""The calibration matrix at the terminal's width: policies as rows, scenarios as columns
under short ids with a legend, every cell one verdict; single letters when words don't fit."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from evalkit.cli.fit import fits, plain_table, print_fitted, short_ids
from evalkit.reference.calibrate import CalibrationCell

LETTERS = {"PASS": "P", "FAIL": "F", "ERROR": "E"}


def _cell(cell: CalibrationCell, letters: bool) -> str:
    got: str = cell.outcome.verdict.verdict
    want: str = cell.expect.verdict
    if letters:
        got, want = LETTERS.get(got, got), LETTERS.get(want, want)
    return got if cell.ok else f"{got}≠{want}"


def matrix_rows(
    cells: Sequence[CalibrationCell], policies: Sequence[str], letters: bool
) -> tuple[list[str], list[list[str]], dict[str, str]]:
    scenarios = list(dict.fromkeys(c.scenario for c in cells))
    short = short_ids(scenarios)
    by = {(c.scenario, c.policy): c for c in cells}
    rows = [
        [policy]
        + [_cell(by[(s, policy)], letters) if (s, policy) in by else "-" for s in scenarios]
        for policy in policies
    ]
    return ["policy"] + [short[s] for s in scenarios], rows, short


def print_matrix(
    console: Console, cells: Sequence[CalibrationCell], policies: Sequence[str]
) -> str:
    """Print the matrix in the widest form that fits; return its shape (for tests)."""
    columns, rows, short = matrix_rows(cells, policies, letters=False)
    letters = not fits(console, plain_table(columns, rows))
    if letters:
        columns, rows, short = matrix_rows(cells, policies, letters=True)
    shape = print_fitted(console, "calibration: got (≠ expected)", columns, rows)
    legend = [f"{s}={full}" for full, s in short.items() if s != full]
    if letters:
        legend.insert(0, "P PASS, F FAIL, E ERROR")
    if legend:
        console.print(Text("  ".join(legend)), soft_wrap=False)
    return ("letters-" if letters else "") + shape

"""The end of `make demo`: the calibration folder's page written, then two lines, the verdict
and the page to open, so a newcomer reads the outcome without scrolling a long report up.

Run as `python -m evalkit.cli.demo_end WORKDIR PAGE`; `make demo-report` prints the full
terminal report of the same folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli.app import guarded_call, rel

if TYPE_CHECKING:
    from evalkit.records.report.model import Report

ON_PATH = 'export PATH="$PWD/.venv/bin:$PATH"'


def final_lines(report: Report, page: str) -> tuple[list[str], bool]:
    """The verdict the folder's own records give (held to verify's record of it) and the page
    line; and whether the demo came out as it should: every cell as expected, every row
    re-derived by verify."""
    from evalkit.records.verify.calibration import NOT_A_MEASUREMENT

    calibration = report.calibration
    if calibration is None:
        verdict, ok = f"CALIBRATION: none recorded in {report.workdir}", False
    else:
        verdict, ok = calibration.headline, calibration.ok
    others = [p for p in report.publishability.problems if p != NOT_A_MEASUREMENT]
    if others:
        verdict, ok = f"{verdict}; {'; '.join(others)}", False
    return [verdict, f"open {page}  (evalkit on PATH: {ON_PATH})"], ok


def main(argv: list[str]) -> int:
    """Exit 0 when the demo came out as it should; an error is one line, as a command's is."""
    import typer

    try:
        ok: bool = guarded_call(_write_and_say, Path(argv[0]).resolve(), Path(argv[1]))
    except typer.Exit as exc:
        return exc.exit_code
    return 0 if ok else 1


def _write_and_say(work: Path, page: Path) -> bool:
    from evalkit.records.pages.html import write_html
    from evalkit.records.report.build import build_report
    from evalkit.suite.config import load_suite

    suite = load_suite(None)
    built = build_report(suite, work)
    write_html(suite, work, page, report=built)
    lines, ok = final_lines(built, rel(page))
    print("\n".join(lines))
    return ok


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

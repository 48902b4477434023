"""`report` and `verify` as JUnit cases: a CI system shows each cell and trial as a test.

Only ids, counts, rates and verdict words go in; a verify problem is counted, not quoted.
"""

from __future__ import annotations

from evalkit.ci.junit import Case, Suite
from evalkit.records.report.model import Cell, ExpectedCheck, Report
from evalkit.records.verify.result import VerifyReport


def _rate(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else f"{k}/{n}"


def _factors(record: Cell | ExpectedCheck) -> list[str]:
    """The agent, CLI version and judge a cell was split by (empty where it was not)."""
    return [x for x in (record.agent, record.cli_version, record.judge) if x]


def report_suites(report: Report) -> list[Suite]:
    """One case for publishability, one for completeness, one per cell (an error when it holds
    ERROR rows) and one per expected bar (a failure on a miss)."""
    pub = report.publishability
    cases = [
        Case(
            "report.folder",
            "publishable",
            "passed" if pub.publishable else "error",
            "" if pub.publishable else f"NOT PUBLISHABLE: {len(pub.problems)} problem(s)",
            "not-publishable",
        ),
        Case(
            "report.folder",
            "complete",
            "error" if report.incomplete else "passed",
            "planned reps with no row: "
            + ", ".join(f"{m.scenario} {m.model} {m.recorded}/{m.planned}" for m in report.missing),
            "incomplete",
        ),
    ]
    for table in report.levels:
        group = table.level or table.kind or "-"
        for cell in table.cells:
            rate = cell.pass_rate
            case = Case(
                f"report.cell.{table.set}.{group}",
                " ".join([cell.polarity, cell.model, cell.variant, *_factors(cell)]),
            )
            if rate.errors:
                case.outcome, case.kind = "error", "error-rows"
                case.message = (
                    f"{rate.errors} ERROR row(s) of {rate.n}; PASS {_rate(rate.k, rate.n)}; "
                    f"scenarios {', '.join(cell.scenarios)}"
                )
            cases.append(case)
    for bar in report.expected:
        where = [bar.set, bar.level, bar.polarity, bar.model, bar.variant, *_factors(bar)]
        case = Case("report.bar", "/".join(where))
        if bar.verdict == "miss":
            case.outcome, case.kind = "failure", "bar-missed"
            case.message = f"{_rate(bar.observed.k, bar.observed.n)} against the bar {bar.bar_text}"
        cases.append(case)
    props = {
        "suite": report.suite,
        "workdir": report.workdir,
        "rows": str(report.rows),
        "publishable": str(pub.publishable).lower(),
        "verification": pub.verification,
    }
    return [Suite(f"evalkit report {report.suite}", cases, props)]


def verify_suites(suite: str, workdir: str, report: VerifyReport) -> list[Suite]:
    """One case per trial (a failure when it did not re-derive), one per count problem, and
    publishability."""
    cases = []
    for trial in report.trials:
        case = Case("verify.trial", trial.name)
        if not trial.ok:
            case.outcome, case.kind = "failure", "mismatch"
            case.message = f"MISMATCH: {len(trial.problems)} problem(s)"
        cases.append(case)
    cases += [
        Case("verify.count", f"count {index}", "failure", "count mismatch", "count")
        for index, _ in enumerate(report.count_problems, start=1)
    ]
    cases += [
        Case("verify.skipped", line, "error", "did not read", "unreadable")
        for line in report.unreadable
    ]
    cases.append(
        Case(
            "verify.folder",
            "publishable",
            "passed" if report.publishable else "error",
            ""
            if report.publishable
            else f"NOT PUBLISHABLE: {len(report.publish_problems)} problem(s)",
            "not-publishable",
        )
    )
    props = {
        "suite": suite,
        "workdir": workdir,
        "trials": str(len(report.trials)),
        "publishable": str(report.publishable).lower(),
    }
    return [Suite(f"evalkit verify {suite}", cases, props)]

"""A suite's expected pass bars set beside what was observed: met, miss (the interval lies
wholly past a bar) or unclear.
"""

from __future__ import annotations

from evalkit.models import (
    ExpectedBar,
)
from evalkit.records.report.model import (
    ExpectedCheck,
    ExpectedVerdict,
    LevelTable,
    Rate,
)


def expected_verdict(
    observed: Rate, bar: float | None, bar_max: float | None = None
) -> ExpectedVerdict:
    """met when the observed rate is within the bars; miss when even the Wilson interval lies
    wholly past one (its upper bound below the minimum, its lower bound above the maximum);
    unclear otherwise (past a bar, but too few reps to rule it out)."""
    verdicts: list[ExpectedVerdict] = []
    if bar is not None:
        if observed.rate is not None and observed.rate >= bar:
            verdicts.append("met")
        elif observed.high is not None and observed.high < bar:
            verdicts.append("miss")
        else:
            verdicts.append("unclear")
    if bar_max is not None:
        if observed.rate is not None and observed.rate <= bar_max:
            verdicts.append("met")
        elif observed.low is not None and observed.low > bar_max:
            verdicts.append("miss")
        else:
            verdicts.append("unclear")
    for worst in ("miss", "unclear"):
        if worst in verdicts:
            return worst
    return "met"


def expected_checks(bars: dict[str, ExpectedBar], levels: list[LevelTable]) -> list[ExpectedCheck]:
    """Every cell whose level (or kind) and polarity have a bar, in table order."""
    found = []
    for table in levels:
        name = table.level or table.kind or ""
        if name not in bars:
            continue
        for cell in table.cells:
            low, high = bars[name].for_model(cell.model, cell.polarity)
            if (low is None and high is None) or cell.pass_rate.n == 0:
                continue
            tier = next(
                (
                    t
                    for t, b in bars[name].models.items()
                    if (t == cell.model or t in cell.model)
                    and getattr(b, cell.polarity) is not None
                ),
                "",
            )
            found.append(
                ExpectedCheck(
                    set=table.set,
                    label=table.label,
                    level=name,
                    model=cell.model,
                    variant=cell.variant,
                    subject_hash=cell.subject_hash,
                    cli_version=cell.cli_version,
                    judge=cell.judge,
                    agent=cell.agent,
                    backend=cell.backend,
                    polarity=cell.polarity,
                    bar=low,
                    bar_max=high,
                    tier=tier,
                    observed=cell.pass_rate,
                    verdict=expected_verdict(cell.pass_rate, low, high),
                )
            )
    return found

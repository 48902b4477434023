"""`evalkit aa`: an A/A folder (`grid --aa`: the suite's wording against a byte-identical copy,
interleaved) read back as what its gate is worth: the verdict-flip rate per scenario and
cell, and the gate's empirical false-positive rate over seeded re-splits. `gate --aa-from`
then refuses a difference below the folder's 95th percentile of chance."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from evalkit.compare.sides import Side, load_side, with_scenarios
from evalkit.errors import NotFoundError, RefusedError
from evalkit.inference.aa import Family, flips, resplit
from evalkit.models import Model, Polarity, ResultRow
from evalkit.suite.config import Suite
from evalkit.suite.subject import AA_VARIANT, SUITE_VARIANT

AA_SCHEMA_VERSION = 1
DRAWS = 1000
ALPHA = 0.05
MEASURE = {"positive": "recall", "negative": "specificity"}


class Flips(Model):
    """Reps paired in order, A's k-th with B's k-th: how many disagree on PASS."""

    where: str = Field(description="a scenario id, or a cell: set/level/polarity/model")
    flips: int
    pairs: int
    rate: float | None


class AaTest(Model):
    """One of the gate's tests on the A/A folder (a model and polarity)."""

    model: str
    polarity: Polarity
    measure: str
    scenarios: int
    mean_difference: float | None = Field(description="the A/A run's own B - A, by scenario")
    p95: float = Field(
        description="95th percentile of |mean per-scenario difference| over the re-splits: "
        "`gate --aa-from` refuses a difference below it"
    )


class AaReport(Model):
    schema_version: int = AA_SCHEMA_VERSION
    suite: str
    workdir: str
    draws: int
    seed: int
    alpha: float
    rejections: int = Field(description="re-splits in which the gate's family rejected")
    false_positive_rate: float
    standard_error: float = Field(description="its Monte Carlo standard error")
    scenarios: list[Flips]
    cells: list[Flips]
    tests: list[AaTest]
    line: str


def _arms(workdir: Path) -> tuple[Side, Side]:
    try:
        return load_side("A", workdir, f"variant:{SUITE_VARIANT}"), load_side(
            "B", workdir, f"variant:{AA_VARIANT}"
        )
    except NotFoundError as missing:  # a folder that is not an A/A run
        raise RefusedError(
            f"{workdir}: not an A/A folder (rows of variants {SUITE_VARIANT} and {AA_VARIANT}, "
            f"from `evalkit grid --aa`): {missing}"
        ) from None


def _outcomes(rows: list[ResultRow]) -> list[int]:
    return [int(r.verdict == "PASS") for r in sorted(rows, key=lambda r: (r.run_id, r.rep))]


Keyed = dict[tuple[str, Polarity], dict[str, tuple[list[int], list[int]]]]


def _families(suite: Suite, a: Side, b: Side) -> tuple[Keyed, dict[str, str]]:
    """Per model and polarity, each scenario's arms; and each scenario's cell."""
    grouped: dict[tuple[str, Polarity, str, str], list[ResultRow]] = {}
    cell_of: dict[str, str] = {}
    for label, side in (("A", a), ("B", b)):
        for row, sf in with_scenarios(suite, side.rows, set()):
            s = sf.scenario
            grouped.setdefault((row.model, s.polarity, sf.id, label), []).append(row)
            level = s.level or s.kind or "-"
            cell_of[sf.id] = f"{s.set}/{level}/{s.polarity}"
    keyed: Keyed = {}
    for (model, polarity, scenario, label), rows in sorted(grouped.items()):
        if label != "A" or (model, polarity, scenario, "B") not in grouped:
            continue
        arm_b = _outcomes(grouped[(model, polarity, scenario, "B")])
        keyed.setdefault((model, polarity), {})[scenario] = (_outcomes(rows), arm_b)
    return keyed, cell_of


def _flips(where: str, counted: list[tuple[int, int]]) -> Flips:
    k, n = sum(c[0] for c in counted), sum(c[1] for c in counted)
    return Flips(where=where, flips=k, pairs=n, rate=k / n if n else None)


def aa_report(
    suite: Suite, workdir: Path, draws: int = DRAWS, seed: int = 0, alpha: float = ALPHA
) -> AaReport:
    """The flip rates and the gate's false-positive rate of an A/A folder."""
    a, b = _arms(workdir)
    keyed, cell_of = _families(suite, a, b)
    if not keyed:
        raise RefusedError(f"{workdir}: no scenario has rows in both arms of the A/A run")
    per_scenario: dict[str, tuple[int, int]] = {}
    per_cell: dict[str, list[tuple[int, int]]] = {}
    for (model, _), family in keyed.items():
        for scenario, (arm_a, arm_b) in family.items():
            counted = flips(arm_a, arm_b)
            per_scenario[f"{scenario} {model}"] = counted
            per_cell.setdefault(f"{cell_of[scenario]}/{model}", []).append(counted)
    families: list[Family] = [dict(f) for f in keyed.values()]
    result = resplit(families, alpha, draws, seed)
    tests = [
        AaTest(
            model=model,
            polarity=polarity,
            measure=MEASURE[polarity],
            scenarios=len(family),
            mean_difference=sum(sum(y) / len(y) - sum(x) / len(x) for x, y in family.values())
            / len(family),
            p95=p95,
        )
        for ((model, polarity), family), p95 in zip(keyed.items(), result.p95, strict=True)
    ]
    line = (
        f"aa: the gate rejected {result.rejections} of {draws} re-splits of identical arms: "
        f"false-positive rate {result.false_positive_rate:.3f} (MC SE "
        f"{result.standard_error:.3f}) at alpha {alpha:g}; act on no difference below "
        + ", ".join(f"{t.measure} {t.model} {t.p95:.3f}" for t in tests)
    )
    return AaReport(
        suite=suite.name,
        workdir=str(workdir),
        draws=draws,
        seed=seed,
        alpha=alpha,
        rejections=result.rejections,
        false_positive_rate=result.false_positive_rate,
        standard_error=result.standard_error,
        scenarios=[_flips(where, [c]) for where, c in sorted(per_scenario.items())],
        cells=[_flips(where, counted) for where, counted in sorted(per_cell.items())],
        tests=tests,
        line=line,
    )

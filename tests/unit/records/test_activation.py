"""The report's activation table: per skill, fired when wanted and quiet when not, read from
the rows' `fired:` flags against each scenario's `wanted:` neighbour and polarity.

The root suite installs evalkit's stock neighbours and N1 names `jot:jot` as the skill a user
would want; the rows are written here, so each rate has one known answer.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.models import ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.report.build import build_report
from evalkit.records.report.model import Activation
from evalkit.suite.config import Suite


def _row(scenario: str, rep: int, verdict: str, fired: list[str]) -> ResultRow:
    return ResultRow(
        scenario=scenario, model="policy:oracle", a="A:PASS", b="B:n/a",
        verdict=verdict,  # type: ignore[arg-type]
        reasons="-", flags=";".join(f"fired:{s}" for s in fired) or "-", run_id="r1", rep=rep,
    )  # fmt: skip


def _table(suite: Suite, tmp_path: Path, rows: list[ResultRow]) -> dict[str, Activation]:
    for row in rows:
        append_row(tmp_path / "results.tsv", row)
    return {a.skill: a for a in build_report(suite, tmp_path).activation if a.set == "run"}


def test_a_neighbour_wanted_by_a_scenario_is_counted_fired_when_wanted(
    suite: Suite, tmp_path: Path
) -> None:
    table = _table(suite, tmp_path, [
        _row("N1-L1-reporting", 1, "PASS", ["jot:jot"]),
        _row("N1-L1-reporting", 2, "PASS", []),
        _row("P1-L1-reporting", 1, "PASS", ["os-vault:write"]),
    ])  # fmt: skip
    jot = table["jot:jot"]
    assert (jot.side, jot.when_wanted.k, jot.when_wanted.n) == ("neighbour", 1, 2)
    assert (jot.quiet_when_not.k, jot.quiet_when_not.n) == (1, 1)
    assert jot.covers.startswith("scratch notes")


def test_a_subject_skill_that_fires_on_a_negative_is_not_quiet(
    suite: Suite, tmp_path: Path
) -> None:
    table = _table(suite, tmp_path, [
        _row("P1-L1-reporting", 1, "PASS", ["os-vault:write"]),
        _row("N2-L2-reporting", 1, "FAIL", ["os-vault:write"]),
        _row("N3-L3-reporting", 1, "PASS", []),
    ])  # fmt: skip
    write = table["os-vault:write"]
    assert (write.side, write.when_wanted.k, write.when_wanted.n) == ("subject", 1, 1)
    assert (write.quiet_when_not.k, write.quiet_when_not.n) == (1, 2)


def test_an_error_row_is_never_the_good_outcome_of_either_rate(
    suite: Suite, tmp_path: Path
) -> None:
    table = _table(suite, tmp_path, [
        _row("P1-L1-reporting", 1, "ERROR", []),
        _row("N2-L2-reporting", 1, "ERROR", []),
    ])  # fmt: skip
    write = table["os-vault:write"]
    assert (write.when_wanted.k, write.when_wanted.errors) == (0, 1)
    assert (write.quiet_when_not.k, write.quiet_when_not.errors) == (0, 1)


def test_every_known_skill_has_a_row_even_when_none_fired(suite: Suite, tmp_path: Path) -> None:
    table = _table(suite, tmp_path, [_row("P1-L1-reporting", 1, "FAIL", [])])
    assert set(suite.skills.known()) == set(table)  # type: ignore[union-attr]


def test_a_suite_without_neighbours_has_no_activation_table(
    mini_root: Path, tmp_path: Path
) -> None:
    mini = Suite(mini_root)
    assert mini.skills is None
    (first,) = [s.id for s in mini.scenarios()][:1]
    append_row(tmp_path / "results.tsv", _row(first, 1, "PASS", []))
    assert build_report(mini, tmp_path).activation == []

"""Self-test fails closed: a checker that scores wrongly is caught, in either direction."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.checkers.vault_write.scoring import VaultWriteChecker
from evalkit.models import Verdict
from evalkit.reference.selftest import CaseCell, self_test
from evalkit.suite.config import Suite
from tests.e2e.conftest import copy_suite

pytestmark = pytest.mark.heavy


def test_every_cell_of_both_sets_comes_out_as_designed(
    suite: Suite, self_test_cells: list[CaseCell]
) -> None:
    cells = self_test_cells
    wrong = [(c.scenario, c.case, c.verdict.verdict, c.verdict.reasons) for c in cells if not c.ok]
    assert wrong == []
    assert {c.scenario for c in cells} == {s.id for s in suite.scenarios("all")}
    assert {c.expect.verdict for c in cells} == {"PASS", "FAIL", "ERROR"}


@pytest.mark.parametrize(("forced", "catcher"), [("PASS", "N1"), ("FAIL", "P1")])
def test_a_checker_that_always_says_one_thing_is_caught(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forced: str,
    catcher: str,
    self_test_cells: list[CaseCell],
) -> None:
    """On the suite cut to the one scenario whose cells come out as designed unpatched and
    expect the other answer somewhere: the negative's violations expect FAIL, so a checker
    stuck at PASS is caught there; the positive's oracle expects PASS, so one stuck at FAIL
    is caught there."""
    real = VaultWriteChecker.check

    def stuck(self: VaultWriteChecker, inp: object) -> Verdict:
        verdict = real(self, inp)  # type: ignore[arg-type]
        verdict.verdict = forced  # type: ignore[assignment]
        return verdict

    kept = [c for c in self_test_cells if c.scenario.split("-")[0] == catcher]
    assert kept and all(c.ok for c in kept), f"{catcher} is red unpatched"
    assert any(c.expect.verdict not in (forced, "ERROR") for c in kept), catcher
    cut = Suite(copy_suite(tmp_path / "suite", only={catcher}))
    monkeypatch.setattr(VaultWriteChecker, "check", stuck)
    cells = self_test(cut, which="run")
    assert any(not c.ok for c in cells)


def test_the_self_test_command_passes_and_says_how_many_cells(
    self_test_command: tuple[int, str, str],
) -> None:
    code, out, _ = self_test_command
    assert code == 0
    assert out.strip().splitlines()[-1].endswith("cells as designed")
    assert "WRONG" not in out


def test_self_test_plays_every_policy_without_the_plugin_too(
    suite: Suite, self_test_cells: list[CaseCell]
) -> None:
    run_set = {s.id for s in suite.scenarios("run")}
    cells = [c for c in self_test_cells if c.scenario in run_set]
    bare = [c for c in cells if c.case.endswith("@none")]
    policies = {p.name for p in suite.reference.policies}
    assert {c.case.removesuffix("@none") for c in bare} == policies
    assert [(c.scenario, c.case) for c in bare if not c.ok] == []
    assert all("required-hooks-not-applied" in c.verdict.flags for c in bare)

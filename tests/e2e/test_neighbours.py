"""The subject among its neighbours through the real CLI: every rep loads evalkit's own
neighbour plugins beside the subject, a neighbour's skill that fires where the subject's was
wanted and the subject's that fires where a neighbour was wanted are both named on the row,
and `verify` re-derives those flags from the kept evidence.

Held-out rule: the assertions read verdicts and flags, never a transcript or the Task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def misroutes(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, dict[tuple[str, str], tuple[str, list[str]]]]:
    """One grid of P1 and N1 through the ideal policy and both misroutes, one rep each."""
    kit = new_kit(tmp_path_factory.mktemp("neighbours"))
    work = kit.base / "w"
    models = "policy:oracle,policy:neighbour-wins,policy:subject-steals"
    grid = kit.run("grid", str(work), "--models", models, "--scenarios",
                   "P1-L1-reporting,N1-L1-reporting", "--reps", "1", timeout=600)  # fmt: skip
    assert grid.returncode == 0, grid.why()
    rows = {
        (r["scenario"][:2], r["model"].removeprefix("policy:")): (
            r["verdict"],
            r["flags"].split(";"),
        )
        for r in kit.tsv(work)
    }
    verified = kit.run("verify", str(work), timeout=600)
    assert verified.returncode == 0, verified.why()
    assert verified.stdout.strip().splitlines()[-1].startswith("PUBLISHABLE"), verified.why()
    return kit, rows


def test_a_neighbour_that_fires_where_the_subject_was_wanted_is_flagged_and_fails(
    misroutes: tuple[Kit, dict[tuple[str, str], tuple[str, list[str]]]],
) -> None:
    verdict, flags = misroutes[1][("P1", "neighbour-wins")]
    assert verdict == "FAIL"
    assert "fired:jot:jot" in flags and "neighbour-won:jot:jot" in flags, flags


def test_the_subject_that_fires_where_a_neighbour_was_wanted_is_flagged_as_stealing(
    misroutes: tuple[Kit, dict[tuple[str, str], tuple[str, list[str]]]],
) -> None:
    verdict, flags = misroutes[1][("N1", "subject-steals")]
    assert verdict == "FAIL"
    assert "fired:os-vault:write" in flags and "subject-stole:jot:jot" in flags, flags


def test_the_ideal_agent_among_neighbours_passes_with_no_misroute(
    misroutes: tuple[Kit, dict[tuple[str, str], tuple[str, list[str]]]],
) -> None:
    rows = misroutes[1]
    for polarity in ("P1", "N1"):
        verdict, flags = rows[(polarity, "oracle")]
        misrouted = [f for f in flags if f.startswith(("neighbour-won:", "subject-stole:"))]
        assert (verdict, misrouted) == ("PASS", []), polarity

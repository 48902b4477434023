"""An A/A run through the real CLI: `grid --aa` with the seeded `policy:coin`, read back by
`evalkit aa`. What `gate --aa-from` makes of such a folder is held in
`tests/unit/compare/test_aa.py`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from evalkit.records.folder.results import read_rows
from evalkit.reference.coin import Coin

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e


def test_a_seeded_aa_grid_with_a_coin_reads_back_as_flips_and_a_false_positive_rate(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> None:
    kit = new_kit(tmp_path_factory.mktemp("aa"))
    work = kit.base / "aa"
    done = kit.run(
        "grid", str(work), "--aa", "--models", "policy:coin:p=0.5", "--scenarios", "P1,N1",
        "--reps", "2", "--jobs", "2", timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    rows = (work / "results.tsv").read_text().splitlines()[1:]
    assert len(rows) == 2 * 2 * 2  # every rep twice: once per arm
    done = kit.run("aa", str(work), "--draws", "200", "--format", "json")
    assert done.returncode == 0, done.why()
    report = json.loads(done.stdout)
    assert sum(f["pairs"] for f in report["scenarios"]) == 2 * 2
    assert report["draws"] == 200 and 0 <= report["false_positive_rate"] <= 1
    # the coin's draws are the rep's: each row's verdict is its rep's draw, arms apart
    coin = Coin(0.5)
    assert all(
        (r.verdict == "PASS") == coin.acts(r.scenario, r.rep)
        for r in read_rows(work / "results.tsv")
        if r.scenario.startswith("P")
    )
    assert {r.variant for r in read_rows(work / "results.tsv")} == {"suite", "aa-copy"}

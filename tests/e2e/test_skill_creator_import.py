"""A skill-creator trigger set imported through the CLI becomes a suite that splits, freezes,
lists and runs: the imported rule reads the real CLI's Skill call as the skill firing, on a
positive (PASS) and on a negative (FAIL). Its self-test is in
tests/unit/suite/test_skill_creator.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.trigger_suite import README, query, write_trigger_set, write_trigger_suite

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

SMALL = ("--reps", "5", "--margin", "0.3", "--share", "0.5")


def test_an_imported_trigger_set_splits_freezes_lists_and_runs(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    kit = new_kit(tmp_path / "kit", suite=write_trigger_suite(tmp_path / "suite"))
    evals = write_trigger_set(tmp_path / "eval_set.json", 12, 12)
    steps = [
        ("import", "skill-creator", str(evals), "--fixture", README, *SMALL),
        ("suite", "split-reserve", "--share", "0.5", "--seed", "3"),
        ("suite", "freeze"),
        ("list", "--set", "all"),
    ]
    for step in steps:
        done = kit.run(*step, timeout=600)
        assert done.returncode == 0, done.why()
    listed = kit.outputs[3].stdout
    ids = {line.split()[0] for line in listed.splitlines()[1:] if line.strip()}
    assert len(ids) == 24 and all(i[:2] in ("P-", "N-") for i in ids)
    assert sum(" reserve " in line for line in listed.splitlines()) == 12
    run = sorted(line.split()[0] for line in listed.splitlines() if " run " in line)
    positive = next(i for i in run if i.startswith("P-"))
    negative = next(i for i in run if i.startswith("N-"))
    work = kit.base / "w"
    grid = kit.run("grid", str(work), "--scenarios", f"{positive},{negative}",
                   "--models", "policy:always-act", "--reps", "1", timeout=600)  # fmt: skip
    assert grid.returncode == 0, grid.why()
    rows = {r["scenario"][0]: (r["verdict"], r["reasons"]) for r in kit.tsv(work)}
    assert rows["P"][0] == "PASS" and "skill-fired" in rows["P"][1]
    assert rows["N"] == ("FAIL", "fail:skill-fired")
    said = "\n".join(d.stdout + d.stderr for d in kit.outputs)
    assert not any(query(t, n) in said for t in (True, False) for n in range(12))

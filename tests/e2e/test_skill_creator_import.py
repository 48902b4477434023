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
TUNED = ("--reps", "2", "--margin", "0.3", "--share", "0.5")
"""The settings the slow test tunes at: 6 scenarios a polarity in each set, 12 a class."""


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


@pytest.mark.slow
def test_a_tune_on_an_imported_trigger_set_finds_the_wording_and_the_reserve_confirms_it(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    """The whole loop on the author's queries: imported, split, frozen, then tuned with
    `policy:phrase`, which fires the skill on a positive only once its description holds the
    words. About a hundred reps: `make calibrate-suites`."""
    import json

    from tests.trigger_suite import SKILL_FILE

    kit = new_kit(tmp_path / "kit", suite=write_trigger_suite(tmp_path / "suite"))
    evals = write_trigger_set(tmp_path / "eval_set.json", 12, 12)
    for step in (("import", "skill-creator", str(evals), "--fixture", README, *TUNED),
                 ("suite", "split-reserve", "--share", "0.5", "--seed", "3"),
                 ("suite", "freeze")):  # fmt: skip
        done = kit.run(*step, timeout=600)
        assert done.returncode == 0, done.why()
    words = "Keep a note of what outlives the task."
    propose = f'sed -i "s/^description: .*/description: {words}/" {SKILL_FILE.as_posix()}'
    work = kit.base / "tune"
    done = kit.run("tune", str(work), "--models", "policy:phrase:outlives+the+task",
                   "--reps", "2", "--margin", "0.3", "--jobs", "2", "--proposer-cmd", propose,
                   timeout=2400)  # fmt: skip
    assert done.returncode == 0, done.why()
    lines = [json.loads(x) for x in (work / "tune.jsonl").read_text().splitlines()]
    rounds = [x for x in lines if x["kind"] == "round"]
    assert rounds[0]["decision"] == "accepted" and rounds[0]["variant"] == "tune-1"
    assert [x["code"] for x in lines if x["kind"] == "reserve"] == [0]
    said = "\n".join(d.stdout + d.stderr for d in kit.outputs)
    briefs = "\n".join(p.read_text() for p in (work / "briefs").glob("*.md"))
    assert not any(query(t, n) in said + briefs for t in (True, False) for n in range(12))

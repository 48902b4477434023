"""`evalkit tune` end to end through the real CLI, on a generated suite large enough for the
tests: `policy:phrase` fails the positives until the skill's description holds its words, a
scripted proposer (a `--proposer-cmd` of sed edits, or the proposer agent
`claude:policy:propose:<plan>` through the real CLI) supplies wordings, and the reserve
confirms once. Long (over a hundred reps): `make calibrate-suites`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.tuning_suite import SKILL, strings, write_tuning_suite

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PHRASE = "policy:phrase:outlives+the+task"
TUNE = ("--models", PHRASE, "--reps", "2", "--margin", "0.3", "--jobs", "2")


def describe(words: str) -> str:
    """A proposer command that sets the skill's description to `words`."""
    return f'sed -i "s/^description: .*/description: {words}/" {SKILL.as_posix()}'


@pytest.fixture(scope="module")
def frozen(new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("tune")
    root = write_tuning_suite(base / "suite")
    done = new_kit(base / "kit", suite=root).run("freeze")
    assert done.returncode == 0, done.why()
    return root


@pytest.fixture
def world(new_kit: Callable[..., Kit], frozen: Path, tmp_path: Path) -> Kit:
    root = tmp_path / "suite"
    shutil.copytree(frozen, root)
    return new_kit(tmp_path / "kit", suite=root)


def lineage(work: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (work / "tune.jsonl").read_text().splitlines()]


def contaminated(kit: Kit) -> dict[str, list[dict[str, Any]]]:
    import yaml

    lock = yaml.safe_load((kit.suite / "evalkit.lock").read_text())
    return dict(lock.get("contaminated") or {})


def calibration_answers(root: Path) -> list[str]:
    """Every reply and note line of the generated scenarios' calibration, 20 characters or
    more: what a brief must never hold."""
    import yaml

    found = []
    for path in sorted(root.glob("scenarios*/*.md")):
        head = path.read_text().split("\n---\n\n## Premise", 1)[0].removeprefix("---\n")
        front = yaml.safe_load(head)
        cal = front["calibration"]
        notes = [cal.get("note") or {}, cal.get("tempting_note") or {}]
        found += [cal["reply"], *(ln for n in notes for ln in n.get("content", "").splitlines())]
    return [x.strip() for x in found if len(x.strip()) >= 20]


def test_tune_finds_the_wording_and_the_reserve_confirms_it(world: Kit) -> None:
    from conftest import leaked_tasks, task_blocks

    work = world.base / "tune"
    proposer = describe("Keep a note of what outlives the task.") + " && echo x > stray.txt"
    done = world.run("tune", str(work), *TUNE, "--proposer-cmd", proposer, timeout=1800)
    assert done.returncode == 0, done.why()
    rounds = [x for x in lineage(work) if x["kind"] == "round"]
    assert rounds[0]["decision"] == "accepted" and rounds[0]["variant"] == "tune-1"
    assert rounds[0]["discarded"] == ["stray.txt"]
    assert [x["code"] for x in lineage(work) if x["kind"] == "reserve"] == [0]
    tune_id = rounds[0]["tune"]
    marks = contaminated(world)
    assert any(tune_id in e["note"] for e in marks["run"])
    assert any(tune_id in e["note"] for e in marks["reserve"])
    patched = "outlives the task" in (work / "tune.patch").read_text()
    assert patched, work / "tune.patch"
    for folder in ("baseline", "tune-1-inner", "tune-1", "reserve"):
        verified = world.run("verify", str(work / folder), timeout=600)
        assert verified.returncode == 0 and "PUBLISHABLE" in verified.stdout, folder
    briefs = [p.read_text() for p in sorted((work / "briefs").glob("*.md"))]
    assert briefs
    tasks = task_blocks(world.suite)
    answers = calibration_answers(world.suite)
    for text in [*briefs, done.output]:
        assert leaked_tasks(text, tasks) == []
        assert not any(answer in text for answer in answers)


def test_a_proposer_agent_finds_the_wording_and_the_reserve_confirms_it(world: Kit) -> None:
    """`--proposer claude:policy:propose:<plan>`: the proposer runs through the real CLI like
    a rep; its first round proposes nothing, its second the wording, which the reserve
    confirms. What its CLI sent holds the brief and no Task line or calibration answer."""
    from conftest import leaked_tasks, task_blocks

    work = world.base / "tune"
    plan = "claude:policy:propose:-/description=Keep+a+note+of+what+outlives+the+task."
    done = world.run("tune", str(work), *TUNE, "--proposer", plan, timeout=1800)
    assert done.returncode == 0, done.why()
    rounds = [(x["round"], x["variant"], x["decision"], x["proposer_reps"])
              for x in lineage(work) if x["kind"] == "round"]  # fmt: skip
    assert rounds == [(1, None, "empty", 1), (2, "tune-1", "accepted", 1)], rounds
    ran = [(x["round"], x["reps"], x["cost_usd"], x["failed"])
           for x in lineage(work) if x["kind"] == "proposer"]  # fmt: skip
    assert ran == [(1, 1, 0.0, ""), (2, 1, 0.0, "")], ran
    assert [x["code"] for x in lineage(work) if x["kind"] == "reserve"] == [0]
    marks = contaminated(world)
    assert marks.get("run") and marks.get("reserve")
    patched = "outlives the task" in (work / "tune.patch").read_text()
    assert patched, work / "tune.patch"
    for folder in ("baseline", "tune-1-inner", "tune-1", "reserve"):
        verified = world.run("verify", str(work / folder), timeout=600)
        assert verified.returncode == 0 and "PUBLISHABLE" in verified.stdout, folder
    received = []
    for path in sorted(work.glob("proposer/round-*/requests.jsonl")):
        received += [s for x in path.read_text().splitlines() for s in strings(json.loads(x))]
    said = "\n".join(received)
    brief = (work / "briefs" / "round-2.md").read_text()
    assert brief.strip() in said, "the scan does not read what the proposer was handed"
    assert leaked_tasks(said, task_blocks(world.suite)) == []
    assert not any(answer in said for answer in calibration_answers(world.suite))


def test_a_wording_that_says_always_is_rejected_on_the_negatives(world: Kit) -> None:
    work = world.base / "tune"
    proposer = describe("Always keep a note of what outlives the task.")
    done = world.run("tune", str(work), *TUNE, "--controls", "0", "--rounds", "1",
                     "--proposer-cmd", proposer, timeout=1800)  # fmt: skip
    assert done.returncode == 3, done.why()
    (only,) = [x for x in lineage(work) if x["kind"] == "round"]
    assert only["decision"] == "rejected"
    assert "negatives" in only["reason"] and "not shown within 0.3" in only["reason"]
    assert "not shown within 0.3" in done.stdout
    assert not (work / "reserve").exists()
    assert "reserve" not in contaminated(world)


def test_the_budget_in_reps_is_never_passed(world: Kit) -> None:
    work = world.base / "tune"
    done = world.run("tune", str(work), *TUNE, "--budget-reps", "30",
                     "--proposer-cmd", describe("Keep what outlives the task."),
                     timeout=1800)  # fmt: skip
    assert done.returncode == 3, done.why()
    assert "--budget-reps 30" in done.stdout
    rows = sum(len(world.tsv(p.parent)) for p in work.glob("*/results.tsv"))
    assert rows <= 30



def test_an_interrupted_tune_resumes_to_the_same_lineage(world: Kit) -> None:
    """A SIGINT in the middle of round 1's run-set grid, then the same command again: the
    reps the interrupt cut short run again as attempts that supersede them, and the tune
    comes to what an uninterrupted one comes to."""
    import signal
    import time

    work = world.base / "tune"
    args = ("tune", str(work), *TUNE, "--proposer-cmd",
            describe("Keep a note of what outlives the task."))  # fmt: skip
    world.extra_env["EVALKIT_SCRIPTED_LATENCY"] = "2"  # each agent holds, so SIGINT lands mid-grid
    proc = world.start(*args)
    deadline = time.monotonic() + 1200
    while not (work / "tune-1" / "plans.jsonl").is_file() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    world.interrupt(proc, 1, signal.SIGINT, timeout=120)
    del world.extra_env["EVALKIT_SCRIPTED_LATENCY"]
    assert proc.returncode != 0
    assert not [x for x in lineage(work) if x["kind"] == "round"]
    done = world.run(*args, timeout=1800)
    assert done.returncode == 0, done.why()
    assert "resumed after 0 round(s)" in done.output
    assert [x for x in world.manifest(work / "tune-1") if x.get("supersedes")]
    rounds = [(x["round"], x["variant"], x["decision"]) for x in lineage(work)
              if x["kind"] == "round"]  # fmt: skip
    assert rounds == [(1, "tune-1", "accepted")], rounds  # as the uninterrupted tune above
    (stop,) = [x for x in lineage(work) if x["kind"] == "stop"]
    assert stop["reason"] == "nothing fails on the run set under tune-1", stop
    assert [x["code"] for x in lineage(work) if x["kind"] == "reserve"] == [0]
    for folder in ("baseline", "tune-1-inner", "tune-1", "reserve"):
        verified = world.run("verify", str(work / folder), timeout=600)
        assert verified.returncode == 0 and "PUBLISHABLE" in verified.stdout, folder

"""`evalkit grid` end to end: a whole run set, verify, resume, report, and Ctrl-C."""

from __future__ import annotations

import json
import re
import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import without_signals

if TYPE_CHECKING:
    from conftest import Done, Kit

pytestmark = pytest.mark.e2e

MODELS = "policy:oracle,policy:always-write"
GRID = ("--models", MODELS, "--set", "run", "--reps", "1", "--jobs", "2")


@pytest.fixture(scope="module")
def grid_run(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, Path, Done]:
    kit = new_kit(tmp_path_factory.mktemp("grid"))
    work = kit.base / "work"
    done = kit.run("grid", str(work), *GRID, timeout=300)
    assert done.returncode == 0, done.why()
    return kit, work, done


def test_the_run_set_grid_writes_every_planned_rep(grid_run: tuple[Kit, Path, Done]) -> None:
    kit, work, _ = grid_run
    rows = kit.tsv(work)
    assert len(rows) == 12
    cells = Counter((r["scenario"], r["model"]) for r in rows)
    assert len(cells) == 12 and set(cells.values()) == {1}, cells
    assert {r["rep"] for r in rows} == {"1"}
    assert len({r["run_id"] for r in rows}) == 1
    assert len(kit.manifest(work)) == 12
    assert not any(r["verdict"] == "ERROR" for r in rows), [
        r for r in rows if r["verdict"] == "ERROR"
    ]
    assert not kit.leftovers(), "claude processes left behind"


def test_the_grid_verifies(grid_run: tuple[Kit, Path, Done]) -> None:
    kit, work, _ = grid_run
    done = kit.run("verify", str(work))
    assert done.returncode == 0, done.why()
    tail = done.stdout.strip().splitlines()[-2:]
    assert tail == ["All 12 trial(s) re-derived from the kept evidence.", "PUBLISHABLE"], tail


def test_resume_after_a_complete_grid_runs_nothing(grid_run: tuple[Kit, Path, Done]) -> None:
    kit, work, _ = grid_run
    before = {n: (work / n).read_bytes() for n in ("results.tsv", "manifest.jsonl", "plans.jsonl")}
    done = kit.run("grid", str(work), *GRID, "--resume")
    assert done.returncode == 0, done.why()
    assert "resuming: 0 rep(s) left to run" in done.stdout, done.why()
    assert "nothing to run" in done.stdout, done.why()
    for name, data in before.items():
        assert (work / name).read_bytes() == data, f"--resume changed {name}"
    assert not list(kit.scratch.glob("evalkit-rep-*")), "--resume started a rep"


def test_report_shows_the_reference_rates(grid_run: tuple[Kit, Path, Done]) -> None:
    kit, work, _ = grid_run
    if "report" not in kit.run("--help").stdout:
        pytest.skip("`evalkit report` is not in this evalkit yet")
    assert kit.run("verify", str(work)).returncode == 0, "report reads the verdict verify records"
    done = kit.run("report", str(work), "--format", "json")
    assert done.returncode == 0, done.why()
    report = json.loads(done.stdout)
    summaries = {(m["set"], m["model"]): m for m in report["models"]}
    expected = {"policy:oracle": (1.0, 1.0), "policy:always-write": (1.0, 0.0)}
    for model, (recall, specificity) in expected.items():
        summary = summaries[("run", model)]
        assert summary["recall"]["n"] == 3 and summary["specificity"]["n"] == 3, summary
        assert summary["recall"]["rate"] == recall, summary
        assert summary["specificity"]["rate"] == specificity, summary
    assert report["rows"] == 12
    assert report["incomplete"] is False and report["missing"] == []
    assert report["publishability"]["publishable"] is True, report["publishability"]


PLAN_LINE = re.compile(r"plan (\S+) (\S+) (\S+): (\d+) rep\(s\) planned, (\d+) recorded")


def test_ctrl_c_stops_the_reps_in_flight_and_verify_counts_the_rest(kit: Kit) -> None:
    work = kit.base / "work"
    proc = kit.start(
        "grid", str(work), "--scenarios", "P1,N1", "--models", "policy:fault-hang",
        "--reps", "2", "--jobs", "2", "--timeout", "60",
    )  # fmt: skip
    stdout, stderr, took = kit.interrupt(proc, 2, signal.SIGINT, timeout=30)
    assert proc.returncode == 130, f"exit {proc.returncode}\n{stdout}\n{stderr}"
    assert took < 8, f"the grid took {took:.1f} s to stop"
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    assert not kit.leftovers(), "claude processes left behind"

    rows = kit.tsv(work)  # also checks every line has the header's column count
    assert [(r["verdict"], without_signals(r["reasons"])) for r in rows] == [
        ("ERROR", "interrupted")
    ] * 2, rows
    assert len(kit.manifest(work)) == 2

    verify = kit.run("verify", str(work))
    assert verify.returncode != 0, verify.why()
    assert verify.stdout.count("  ok        ") == 2, verify.why()
    missing = 0
    for planned_run, scenario, model, planned, recorded in PLAN_LINE.findall(verify.stdout):
        assert planned_run == rows[0]["run_id"] and model == "policy:fault-hang", verify.why()
        assert scenario in {"P1-L1-reporting", "N1-L1-reporting"}, verify.why()
        missing += int(planned) - int(recorded)
    assert missing == 2, verify.why()
    assert "counts differ: 2 TSV row(s), 2 manifest line(s), 4 planned rep(s)" in verify.stdout

    resumed = kit.run(
        "grid", str(work), "--scenarios", "P1,N1", "--models", "policy:fault-hang",
        "--reps", "2", "--jobs", "2", "--timeout", "3", "--resume",
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.why()
    said = "4 rep(s) left to run, 4 of them planned before, 2 of them interrupted before"
    assert said in resumed.stdout, resumed.why()
    rows = kit.tsv(work)  # the interrupted rows stay in the file, replaced
    assert len(rows) == 6 and {r["run_id"] for r in rows} == {rows[0]["run_id"]}, rows
    plans = (work / "plans.jsonl").read_text().splitlines()
    assert len(plans) == 1, "resume planned the same reps twice"
    verify = kit.run("verify", str(work))
    assert verify.returncode == 0, verify.why()
    assert "All 6 trial(s) re-derived from the kept evidence." in verify.stdout, verify.why()
    assert verify.stdout.count("resumed after interrupted") == 2, verify.why()
    assert "NOT PUBLISHABLE" in verify.stdout and "4 ERROR row(s)" in verify.stdout


def test_a_resumed_grid_runs_its_interrupted_reps_again_and_publishes(kit: Kit) -> None:
    """The reps a Ctrl-C stopped are run again by --resume, each as its next attempt, which
    supersedes the interrupted one: its row and evidence stay in the folder, named by verify,
    and every planned rep counts once, so the folder can be PUBLISHABLE."""
    work = kit.base / "work"
    grid = ("grid", str(work), "--scenarios", "P1,N1", "--models", "policy:oracle",
            "--reps", "2", "--jobs", "2")  # fmt: skip
    kit.extra_env["EVALKIT_SCRIPTED_LATENCY"] = "60"  # every agent waits on its first answer
    stdout, stderr, _ = kit.interrupt(kit.start(*grid), 2, signal.SIGINT, timeout=30)
    del kit.extra_env["EVALKIT_SCRIPTED_LATENCY"]
    stopped = kit.tsv(work)
    assert [(r["verdict"], without_signals(r["reasons"])) for r in stopped] == [
        ("ERROR", "interrupted")
    ] * 2, stopped
    resumed = kit.run(*grid, "--resume")
    assert resumed.returncode == 0, resumed.why()
    rows = kit.tsv(work)
    assert len(rows) == 6 and rows[:2] == stopped, "the interrupted rows did not stay"
    counted = Counter((r["scenario"], r["rep"]) for r in rows if r["verdict"] == "PASS")
    assert sorted(counted.values()) == [1] * 4, counted
    again = [x for x in kit.manifest(work) if x.get("supersedes")]
    assert [x["attempt"] for x in again] == [2, 2], again
    kept = [x["evidence"] for x in kit.manifest(work) if x["verdict"] == "ERROR"]
    assert len(kept) == 2 and all((work / e / "transcript.jsonl").is_file() for e in kept)
    verify = kit.run("verify", str(work))
    tail = verify.stdout.strip().splitlines()[-2:]
    assert tail == ["All 6 trial(s) re-derived from the kept evidence.", "PUBLISHABLE"], tail
    assert verify.stdout.count("resumed after interrupted") == 2, verify.why()
    report = json.loads(kit.run("report", str(work), "--format", "json").stdout)
    assert report["publishability"]["publishable"] is True, report["publishability"]

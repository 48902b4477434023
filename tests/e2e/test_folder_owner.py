"""A results folder under concurrent grids, torn files and unwritable targets, through the
real CLI and real evalkit processes."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import without_signals

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

GRID = (
    "--scenarios", "P1,N1", "--models", "policy:oracle", "--reps", "2", "--jobs", "2",
)  # fmt: skip


def test_two_resumes_at_once_never_run_a_rep_twice(kit: Kit) -> None:
    work = kit.base / "work"
    proc = kit.start("grid", str(work), *GRID)
    _, stderr, _ = kit.interrupt(proc, 2, signal.SIGINT, timeout=60)
    assert proc.returncode == 130, stderr
    before = len(kit.tsv(work))
    assert before < 4, "the grid finished before it could be interrupted"
    [plan] = [json.loads(x) for x in (work / "plans.jsonl").read_text().splitlines()]
    assert "--scenarios P1,N1" in plan["command"], plan["command"]

    first, second = kit.run_many(
        ("grid", str(work), *GRID, "--resume"), ("grid", str(work), *GRID, "--resume"),
        timeout=300,
    )  # fmt: skip
    codes = sorted([first.returncode, second.returncode])
    refused = [d for d in (first, second) if d.returncode == 2]
    if codes == [0, 2]:
        [busy] = refused
        assert "another grid is running in this folder (pid " in busy.stderr, busy.why()
        assert "Traceback" not in busy.stderr, busy.why()
    else:  # the second started only after the first had finished: it found nothing to do
        assert codes == [0, 0], (first.why(), second.why())
        assert any("nothing to run" in d.stdout for d in (first, second))

    # a rep the Ctrl-C stopped keeps its ERROR row, superseded by the one resume that ran it
    # again: every planned rep passed exactly once, and nothing else was recorded
    rows = kit.tsv(work)
    passed = Counter((r["scenario"], r["model"], r["rep"]) for r in rows if r["verdict"] == "PASS")
    assert len(passed) == 4 and set(passed.values()) == {1}, passed
    stopped = [r for r in rows if r["verdict"] != "PASS"]
    assert all(without_signals(r["reasons"]) == "interrupted" for r in stopped), len(stopped)
    assert len(stopped) <= before and len(kit.manifest(work)) == len(rows)
    verify = kit.run("verify", str(work))
    said = f"All {len(rows)} trial(s) re-derived from the kept evidence."
    assert said in verify.stdout and "PUBLISHABLE" in verify.stdout, verify.why()
    assert not (work / "grid.lock").exists()
    assert not kit.leftovers(), "claude processes left behind"


def test_a_run_after_a_torn_last_row_appends_a_whole_row(kit: Kit) -> None:
    work = kit.base / "work"
    assert kit.run("run", "P1", "policy:oracle", str(work)).returncode == 0
    results, manifest = work / "results.tsv", work / "manifest.jsonl"
    results.write_bytes(results.read_bytes()[:-60])
    manifest.write_bytes(manifest.read_bytes()[:-100])
    done = kit.run("run", "P1", "policy:oracle", str(work))
    assert done.returncode == 0, done.why()
    lines = results.read_text().splitlines()
    assert lines[-1].startswith("P1-L1-reporting\tpolicy:oracle\tA:PASS\t"), lines[-1]
    assert len(lines[-1].split("\t")) == len(lines[0].split("\t"))
    verify = kit.run("verify", str(work))
    assert "results.tsv:2: " in verify.stdout, verify.why()
    assert "manifest.jsonl:1: unreadable manifest line" in verify.stdout, verify.why()
    assert "Traceback" not in verify.output
    report = kit.run("report", str(work))
    assert report.returncode == 0 and "results.tsv:2: " in report.stdout, report.why()


@pytest.mark.parametrize("target", ["results.tsv", "notes"])
def test_a_bad_results_target_is_refused_before_anything_is_planned(kit: Kit, target: str) -> None:
    work = kit.base / "work"
    work.mkdir()
    args: tuple[str, ...] = ()
    if target == "results.tsv":
        (work / "results.tsv").mkdir()
    else:
        notes = kit.base / "notes.txt"
        notes.write_text("my important notes\n")
        args = ("--results", str(notes))
    done = kit.run("run", "P1", "policy:oracle", str(work), *args)
    assert done.returncode == 2, done.why()
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.why()
    assert not (work / "plans.jsonl").exists() and not (work / "evidence").exists()
    if target == "notes":
        assert (kit.base / "notes.txt").read_text() == "my important notes\n"


def test_keep_sandboxes_says_where_each_sandbox_is(kit: Kit) -> None:
    done = kit.run("run", "N1", "policy:oracle", str(kit.base / "work"), "--keep-sandboxes")
    assert done.returncode == 0, done.why()
    [line] = [x for x in done.stdout.splitlines() if "sandbox kept at " in x]
    kept = Path(line.split("sandbox kept at ", 1)[1].strip())
    assert (kept / "project").is_dir() and (kept / "sandbox.json").is_file(), line

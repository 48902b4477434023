"""The rep pipeline changes no result: the same grid and the same run, with it and without it
(EVALKIT_PIPELINE=0), leave the same rows in the same order and the same evidence."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.conftest import without_signals

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

GRID = (
    "--scenarios", "P1,N1,P2", "--models", "policy:oracle,policy:always-write",
    "--reps", "1", "--jobs", "1",
)  # fmt: skip
RUN = ("P2", "policy:flaky-oracle", "--reps", "2", "--retry-errors", "1")
ROW_FIELDS = ("scenario", "model", "rep", "verdict", "a", "b", "reasons", "flags",
              "attempt", "variant", "subject_hash", "cli_version", "bundle_id")  # fmt: skip


def recorded(kit: Kit, work: Path) -> dict[str, Any]:
    """What a results folder holds, less what differs between any two runs: run ids, times,
    durations, token counts and the sandbox paths inside kept files."""
    rows = [tuple(row[f] for f in ROW_FIELDS) for row in kit.tsv(work)]
    lines = []
    for line in kit.manifest(work):
        folder = work / line["evidence"]
        lines.append(
            (
                line["scenario"], line["model"], line["rep"], line["attempt"], line["verdict"],
                line.get("superseded_by"), line.get("retry_reason"),
                tuple(sorted(line["files"].items())),
                tuple(sorted(p.name for p in folder.iterdir())),
                json.loads((folder / "check.json").read_text())["verdict"],
            )
        )  # fmt: skip
    return {"rows": rows, "evidence": lines}


@pytest.fixture(scope="module")
def both_ways(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any]]:
    kit = new_kit(tmp_path_factory.mktemp("pipeline"))
    found = []
    for setting in ("1", "0"):
        work = kit.base / f"work-{setting}"
        env = {**kit.env, "EVALKIT_PIPELINE": setting}
        grid = kit.run("grid", str(work), *GRID, timeout=600, env=env)
        assert grid.returncode == 0, grid.why()
        run = kit.run("run", *RUN, str(work), timeout=600, env=env)
        assert run.returncode == 0, run.why()
        found.append(recorded(kit, work))
    assert not kit.leftovers(), "claude processes left behind"
    return found[0], found[1]


def test_the_pipeline_records_what_one_rep_after_another_records(
    both_ways: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    piped, plain = both_ways
    assert len(plain["rows"]) == 8 and len(plain["evidence"]) == 10, plain
    assert {r[3] for r in plain["rows"]} == {"PASS", "FAIL"}, plain["rows"]
    assert piped["rows"] == plain["rows"]
    assert piped["evidence"] == plain["evidence"]


def test_the_comparison_sees_two_rows_swapped(
    both_ways: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    piped, plain = both_ways
    rows = list(piped["rows"])
    rows[0], rows[1] = rows[1], rows[0]
    assert rows != plain["rows"]
    evidence = list(piped["evidence"])
    evidence[2], evidence[3] = evidence[3], evidence[2]
    assert evidence != plain["evidence"]


def test_a_stop_leaves_the_rep_prepared_ahead_without_a_trace(kit: Kit) -> None:
    work = kit.base / "work"
    proc = kit.start("run", "N1", "policy:fault-hang", str(work), "--reps", "3", "--timeout", "60")
    _, stderr, _ = kit.interrupt(proc, 1, signal.SIGINT, timeout=30)
    assert proc.returncode == 130, stderr
    assert not kit.leftovers(), "claude processes left behind"
    rows = kit.tsv(work)
    got = [(r["verdict"], without_signals(r["reasons"]), r["rep"]) for r in rows]
    assert got == [("ERROR", "interrupted", "1")]
    folders = sorted(p.name for p in (work / "evidence").glob("*/*/*/*"))
    assert folders == ["rep-1"], folders
    assert not list(kit.scratch.glob("evalkit-*")), list(kit.scratch.iterdir())

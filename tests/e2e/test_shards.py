"""A grid spread over shards that never talk to each other, merged back into one run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Done, Kit

pytestmark = pytest.mark.e2e

GRID = ("--models", "policy:oracle", "--scenarios", "P1,N1,P2",
        "--reps", "2", "--jobs", "2")  # fmt: skip
"""Six reps, two to a shard: the slice is strided over (scenario, model, rep), so the two
reps of a scenario land in different shards and the merge must keep their numbers apart."""


@pytest.fixture(scope="module")
def shards(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, list[Path], list[Done]]:
    kit = new_kit(tmp_path_factory.mktemp("shards"))
    folders = [kit.base / f"shard-{i}" for i in (1, 2, 3)]
    done = kit.run_many(
        *(("grid", str(folders[i - 1]), *GRID, "--shard", f"{i}/3") for i in (1, 2, 3)),
        timeout=300,
    )
    for one in done:
        assert one.returncode == 0, one.why()
    return kit, folders, done


def test_three_shards_are_one_grid_with_one_run_id(
    shards: tuple[Kit, list[Path], list[Done]],
) -> None:
    kit, folders, done = shards
    rows = [r for f in folders for r in kit.tsv(f)]
    assert len(rows) == 6 and len({r["run_id"] for r in rows}) == 1
    assert len({(r["scenario"], r["model"], r["rep"]) for r in rows}) == 6
    digests = {line.split(", grid ")[1].split(",")[0] for d in done for line in
               d.stdout.splitlines() if line.startswith("shard ")}  # fmt: skip
    assert len(digests) == 1, [d.stdout for d in done]


def test_merged_shards_verify_publishable(shards: tuple[Kit, list[Path], list[Done]]) -> None:
    kit, folders, _ = shards
    merged = kit.base / "merged"
    done = kit.run("merge", str(merged), *map(str, folders))
    assert done.returncode == 0, done.why()
    assert "merged shard(s) 1/3, 2/3, 3/3" in done.stdout and "missing" not in done.output
    verify = kit.run("verify", str(merged))
    assert verify.returncode == 0, verify.why()
    assert "All 6 trial(s) re-derived from the kept evidence." in verify.stdout, verify.why()
    assert verify.stdout.strip().splitlines()[-1] == "PUBLISHABLE", verify.why()

    again = kit.run("merge", str(merged), str(folders[1]))
    assert again.returncode == 2 and again.stderr.count("\n") == 1, again.why()
    assert "already in" in again.stderr and "merged twice" in again.stderr
    assert len(kit.tsv(merged)) == 6, "a refused merge changed the merged folder"


def test_the_same_shard_twice_is_refused_and_writes_nothing(
    shards: tuple[Kit, list[Path], list[Done]],
) -> None:
    kit, folders, _ = shards
    out = kit.base / "twice"
    done = kit.run("merge", str(out), str(folders[0]), str(folders[0]))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.why()
    assert "merged twice" in done.stderr
    assert not out.exists()


def test_a_shard_of_another_grid_is_refused(shards: tuple[Kit, list[Path], list[Done]]) -> None:
    kit, folders, _ = shards
    other = kit.base / "other"
    done = kit.run("grid", str(other), *GRID[:-4], "--reps", "1", "--shard", "1/3")
    assert done.returncode == 0, done.why()
    out = kit.base / "mixed"
    refused = kit.run("merge", str(out), str(folders[0]), str(other))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.why()
    assert "a shard of grid" in refused.stderr and "not of" in refused.stderr
    assert not out.exists()


def test_a_missing_shard_is_named_by_merge(
    shards: tuple[Kit, list[Path], list[Done]],
) -> None:
    kit, folders, _ = shards
    out = kit.base / "partial"
    done = kit.run("merge", str(out), str(folders[0]), str(folders[2]))
    assert done.returncode == 0, done.why()
    assert "missing shard(s): 2/3" in done.stderr, done.why()
    verify = kit.run("verify", str(out))
    last = verify.stdout.strip().splitlines()[-2]
    assert last.startswith("NOT PUBLISHABLE") and "missing shard(s) 2/3" in last, verify.why()
    report = kit.run("report", str(out), "--format", "json")
    assert report.returncode == 0, report.why()
    assert json.loads(report.stdout)["incomplete"] is True


def test_auto_shard_says_which_index_it_used(kit: Kit) -> None:
    kit.extra_env["JOB_COMPLETION_INDEX"] = "1"
    done = kit.run("grid", str(kit.base / "w"), *GRID[:-4], "--reps", "1", "--shard", "auto/3")
    assert done.returncode == 0, done.why()
    assert "shard 2/3 (from JOB_COMPLETION_INDEX=1)" in done.stdout, done.why()

"""The Slurm recipe of docs/scale-out.md, submitted as written to a real single-node Slurm: a
3-task array of shards through the real CLI and the scripted model, merged, verified."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.recipes import fenced
from tests.slurm_cluster import single_node_slurm

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "scale-out.md"


def test_the_slurm_array_recipe_runs_three_shards_that_merge_publishable(
    new_kit: Callable[..., Kit], tmp_path: Path, suite_copier: Callable[..., Path]
) -> None:
    suite = suite_copier(tmp_path / "suite", only={"P1"})
    kit = new_kit(tmp_path / "world", suite)
    frozen = kit.run("suite", "freeze")
    assert frozen.returncode == 0, frozen.why()
    submit = tmp_path / "submit"
    submit.mkdir()
    (submit / ".venv").symlink_to(REPO / ".venv")
    (submit / "shards.sbatch").write_text(fenced(DOC, "Slurm", "bash"), encoding="utf-8")
    env = kit.env | {"EVALKIT_SUITE": str(suite), "MODELS": "policy:oracle"}

    with single_node_slurm(tmp_path / "slurm") as cluster:
        done = subprocess.run(
            ["sbatch", "--wait", "shards.sbatch"],
            cwd=submit,
            env=env | cluster,
            capture_output=True,
            text=True,
            timeout=300,
        )
    logs = {p.name: p.read_text(errors="replace") for p in sorted(submit.glob("slurm-*.out"))}
    assert done.returncode == 0, (done.stdout, done.stderr, {k: v[-1500:] for k, v in logs.items()})
    assert len(logs) == 3, sorted(logs)
    sources = sorted(str(p) for p in (submit / "runs").glob("shard-*"))
    assert [Path(s).name for s in sources] == ["shard-1", "shard-2", "shard-3"]
    told = [
        line for text in logs.values() for line in text.splitlines() if line.startswith("shard ")
    ]
    assert sorted(line.split()[1] for line in told) == ["1/3", "2/3", "3/3"], told

    merged = kit.run("merge", str(tmp_path / "results"), *sources)
    assert merged.returncode == 0, merged.why()
    assert "merged shard(s) 1/3, 2/3, 3/3" in merged.stdout, merged.why()
    verify = kit.run("verify", str(tmp_path / "results"))
    assert verify.returncode == 0, verify.why()
    assert verify.stdout.strip().splitlines()[-1] == "PUBLISHABLE", verify.why()

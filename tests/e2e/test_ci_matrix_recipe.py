"""The CI-matrix recipe of docs/scale-out.md, run as written: its shard job's steps for
EVALKIT_SHARD_INDEX 0..2 (three fresh runners, side by side), then its merge job's steps over
the three artifacts, with the scripted model standing in for MODELS."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.recipes import StepRunner, download_from, fenced, job_steps, nothing, upload_to

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "scale-out.md"


def _runner(kit: Kit, folder: Path, suite: Path, values: dict[str, str], store: Path) -> StepRunner:
    """A fresh runner: a folder holding the set-up repository's venv, nothing else."""
    folder.mkdir()
    (folder / ".venv").symlink_to(REPO / ".venv")
    env = kit.env | {
        "EVALKIT_SUITE": str(suite),
        "MODELS": "policy:oracle",
        "GITHUB_STEP_SUMMARY": str(folder / "summary.md"),
    }
    return StepRunner(
        cwd=folder,
        env=env,
        values=values,
        actions={
            "actions/checkout": nothing,
            "actions/upload-artifact": upload_to(store, values),
            "actions/download-artifact": download_from(store),
        },
        prepared=frozenset({"make setup"}),
        timeout=300,
    )


def test_the_matrix_recipe_shards_merge_and_verify(
    new_kit: Callable[..., Kit], tmp_path: Path, suite_copier: Callable[..., Path]
) -> None:
    suite = suite_copier(tmp_path / "suite", only={"P1"})
    kit = new_kit(tmp_path / "world", suite)
    frozen = kit.run("suite", "freeze")
    assert frozen.returncode == 0, frozen.why()
    workflow = fenced(DOC, "GitHub Actions", "yaml")
    store = tmp_path / "artifacts"
    store.mkdir()
    secrets = {"secrets.ANTHROPIC_API_KEY": ""}

    def shard(index: int) -> list[str]:
        values = {"matrix.index": str(index), **secrets}
        runner = _runner(kit, tmp_path / f"runner-{index}", suite, values, store)
        done = runner.run_job(job_steps(workflow, "shard"))
        return [
            f"exit {d.returncode}: {d.args[-1]}\n{d.stderr[-1500:]}" for d in done if d.returncode
        ]

    with ThreadPoolExecutor(max_workers=3) as pool:
        failures = [f for found in pool.map(shard, range(3)) for f in found]
    assert not failures, failures
    assert sorted(os.listdir(store)) == ["shard-0", "shard-1", "shard-2"]

    merger = _runner(kit, tmp_path / "merge-runner", suite, secrets, store)
    done = merger.run_job(job_steps(workflow, "merge"))
    assert all(d.returncode == 0 for d in done), [(d.args[-1], d.stderr[-1500:]) for d in done]
    assert len(done) == 2, "the merge job ran fewer steps than the recipe has"
    merged = "\n".join(d.stdout for d in done)
    assert "merged shard(s) 1/3, 2/3, 3/3" in merged, merged[-2000:]
    assert merged.strip().splitlines()[-1] == "PUBLISHABLE", merged[-2000:]
    summary = (tmp_path / "merge-runner" / "summary.md").read_text(encoding="utf-8")
    assert "policy:oracle" in summary, "the report did not reach the step summary"

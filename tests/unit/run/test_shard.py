"""Shards: which slice a machine runs, and where its index came from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.run.grid import expand_cells
from evalkit.run.shard import grid_digest, parse_shard, slice_cells, subject_hashes
from evalkit.suite.config import Suite
from evalkit.suite.subject import build_subject


def test_an_explicit_shard_is_one_based_and_checked() -> None:
    assert parse_shard("2/3").label == "2/3"
    for bad in ("0/3", "4/3", "x/3", "1/0", "2"):
        with pytest.raises(ConfigError, match="--shard"):
            parse_shard(bad)


def test_auto_maps_each_schedulers_zero_based_index_and_names_it() -> None:
    k8s = parse_shard("auto/4", {"JOB_COMPLETION_INDEX": "0"})
    assert (k8s.index, k8s.source) == (1, "JOB_COMPLETION_INDEX=0")
    slurm = parse_shard("auto/4", {"SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10"})
    assert slurm.index == 3 and "SLURM_ARRAY_TASK_MIN=10" in slurm.source
    assert parse_shard("auto/4", {"EVALKIT_SHARD_INDEX": "3"}).index == 4
    with pytest.raises(ConfigError, match="none of JOB_COMPLETION_INDEX"):
        parse_shard("auto/4", {})
    with pytest.raises(ConfigError, match="outside 0..3"):
        parse_shard("auto/4", {"EVALKIT_SHARD_INDEX": "4"})


def test_the_slices_cover_the_grid_once_whatever_order_the_options_gave(suite: Suite) -> None:
    scenarios = suite.scenarios("run")[:3]
    cells = expand_cells(scenarios, ["b", "a"], 2)
    reordered = expand_cells(list(reversed(scenarios)), ["a", "b"], 2)
    keys = [
        [(c.scenario.id, c.model, c.rep) for c in slice_cells(cells, parse_shard(f"{i}/3"))]
        for i in (1, 2, 3)
    ]
    assert sorted(k for part in keys for k in part) == sorted(
        (c.scenario.id, c.model, c.rep) for c in cells
    )
    assert keys[0] == [
        (c.scenario.id, c.model, c.rep) for c in slice_cells(reordered, parse_shard("1/3"))
    ]
    assert grid_digest(suite, cells, {}) == grid_digest(suite, reordered, {})
    assert grid_digest(suite, cells, {}) != grid_digest(suite, cells[:-1], {})
    assert grid_digest(suite, cells, {}) != grid_digest(suite, cells, {"max_turns": 3})


def test_variants_of_one_cell_never_share_a_rep_number(suite: Suite) -> None:
    cells = expand_cells(suite.scenarios("run")[:2], ["a"], 3, ["suite", "terse"])
    keys = [(c.scenario.id, c.model, c.rep) for c in cells]
    assert len(set(keys)) == len(keys) == 12
    first = [(c.rep, c.variant) for c in cells if c.scenario.id == cells[0].scenario.id]
    assert first == [(1, "suite"), (2, "terse"), (3, "suite"), (4, "terse"), (5, "suite"),
                     (6, "terse")]  # fmt: skip
    assert [c.rep for c in expand_cells(suite.scenarios("run")[:1], ["a"], 3)] == [1, 2, 3]


def test_shards_run_with_different_plugin_checkouts_are_not_one_grid(
    suite: Suite, tmp_path: Path
) -> None:
    cells = expand_cells(suite.scenarios("run")[:2], ["a"], 2)
    checkout = tmp_path / "os-vault"
    shutil.copytree(suite.root / "fixtures/plugins/os-vault", checkout)

    def digest(plugins: list[Path] | None) -> str:
        own = build_subject(suite, plugins)
        return grid_digest(suite, cells, {}, subject_hashes(suite, cells, own, plugins))

    assert digest([checkout]) == digest(None)
    skill = checkout / "skills/write/SKILL.md"
    skill.write_text(skill.read_text() + "\nWrite the note first.\n")
    assert digest([checkout]) != digest(None)

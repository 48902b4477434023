"""CLI versions as an axis through the real CLIs `make setup` put in the version cache."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("EVALKIT_TEST_CLI_CACHE") or REPO / ".tools" / "cli-cache")
VERSIONS = ("2.1.326", "2.1.327", "2.1.328")


def versioned_kit(new_kit: Callable[..., Kit], base: Path) -> Kit:
    """A kit whose version cache is the one `make setup` fills; never the registry."""
    absent = [v for v in VERSIONS if not (CACHE / v / "node_modules/.bin/claude").exists()]
    if absent:
        pytest.fail(f"CLI version(s) {', '.join(absent)} not in {CACHE}: run `make setup`")
    kit = new_kit(base)
    kit.extra_env["EVALKIT_CLI_CACHE"] = str(CACHE)
    kit.extra_env["npm_config_offline"] = "true"
    return kit


@pytest.fixture
def versioned(new_kit: Callable[..., Kit], tmp_path: Path) -> Kit:
    return versioned_kit(new_kit, tmp_path)


@pytest.fixture(scope="module")
def two_versions(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, Path]:
    """One grid of P1 through 2.1.327 and 2.1.328 under a regression planted from 2.1.328:
    one rep per version. Read, never written, by the tests that use it."""
    kit = versioned_kit(new_kit, tmp_path_factory.mktemp("two-versions"))
    work = kit.base / "w"
    grid = kit.run("grid", str(work), "--models", "policy:regress-from:2.1.328",
                   "--scenarios", "P1", "--reps", "1", "--cli", "2.1.327,2.1.328",
                   timeout=600)  # fmt: skip
    assert grid.returncode == 0, grid.why()
    return kit, work


def test_a_grid_of_two_versions_interleaves_them_and_compares_by_version(
    two_versions: tuple[Kit, Path],
) -> None:
    versioned, work = two_versions
    rows = versioned.tsv(work)
    by_rep = sorted((int(r["rep"]), r["cli_version"]) for r in rows)
    assert by_rep == [(1, "2.1.327"), (2, "2.1.328")]
    integrity = {x["declarations"]["cli_integrity"] for x in versioned.manifest(work)}
    assert len(integrity) == 2 and all(i.startswith("sha512-") for i in integrity)
    verified = versioned.run("verify", str(work), timeout=600)
    assert verified.returncode == 0, verified.why()
    assert verified.stdout.strip().splitlines()[-1].startswith("PUBLISHABLE"), verified.why()
    report = json.loads(versioned.run("report", str(work), "--format", "json").stdout)
    assert report["cli_versions"] == ["2.1.327", "2.1.328"]
    assert sorted(m["cli_version"] for m in report["models"]) == ["2.1.327", "2.1.328"]
    compared = versioned.run("compare", str(work), "--a", "cli:2.1.327", "--b", "cli:2.1.328")
    assert compared.returncode == 0, compared.why()
    assert "differ in cli_version only" in compared.stdout


def test_a_version_not_in_the_cache_and_not_on_npm_is_one_line_before_planning(
    versioned: Kit,
) -> None:
    work = versioned.base / "w"
    done = versioned.run("run", "P1", "policy:oracle", str(work), "--cli", "0.0.1")
    assert done.returncode == 2, done.why()
    assert done.stderr.count("\n") == 1 and "--cli 0.0.1" in done.stderr
    assert not (work / "plans.jsonl").exists()


def test_a_planted_regression_is_played_by_the_version_each_cli_names(
    two_versions: tuple[Kit, Path],
) -> None:
    versioned, work = two_versions
    verdicts = {r["cli_version"]: r["verdict"] for r in versioned.tsv(work)}
    assert verdicts == {"2.1.327": "PASS", "2.1.328": "FAIL"}


def test_bisect_names_the_planted_first_bad_version_through_three_clis(versioned: Kit) -> None:
    work = versioned.base / "w"
    done = versioned.run("bisect", str(work), "--good", "2.1.326", "--bad", "2.1.328",
                         "--versions", ",".join(VERSIONS), "--model",
                         "policy:regress-from:2.1.327", "--scenarios", "P1", "--n0", "4",
                         timeout=900)  # fmt: skip
    assert done.returncode == 0, done.why()
    assert "first bad version: 2.1.327 (last good: 2.1.326)" in done.stdout, done.why()
    rows = versioned.tsv(work)
    assert {r["cli_version"] for r in rows} == set(VERSIONS)
    verified = versioned.run("verify", str(work), timeout=600)
    assert verified.returncode == 0, verified.why()
    assert verified.stdout.strip().splitlines()[-1].startswith("PUBLISHABLE"), verified.why()

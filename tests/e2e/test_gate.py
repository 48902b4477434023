"""`evalkit gate` on real folders from the scripted model: each exit code, and what CI reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

GRID = ("--reps", "1", "--jobs", "2")
FOLDERS = {
    "oracle": ("policy:oracle", ("--set", "all")),
    "always-write": ("policy:always-write", ("--set", "all")),
    "fault": ("policy:fault-500", ("--scenarios", "P1,N1")),
    "subset": ("policy:oracle", ("--scenarios", "P1,N1")),
}


@pytest.fixture(scope="module")
def folders(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, dict[str, Path]]:
    """One rep per cell of each folder, every folder verified (gate reads the verdict)."""
    kit = new_kit(tmp_path_factory.mktemp("gate"))
    works = {}
    for name, (model, which) in FOLDERS.items():
        works[name] = kit.base / name
        done = kit.run("grid", str(works[name]), "--models", model, *which, *GRID, timeout=600)
        assert done.returncode == 0, done.why()
        kit.run("verify", str(works[name]), timeout=600)
    return kit, works


def test_oracle_against_always_write_exits_1_naming_the_negatives(
    folders: tuple[Kit, dict[str, Path]], task_leaks: Callable[[str], list[str]]
) -> None:
    kit, works = folders
    junit = kit.base / "gate.xml"
    summary = kit.base / "summary.md"
    env = {**kit.env, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    done = kit.run(
        "gate", str(works["oracle"]), str(works["always-write"]), "--junit", str(junit), env=env
    )
    assert done.returncode == 1, done.why()
    assert "gate: regression: specificity" in done.stdout
    marks = [line for line in done.stdout.splitlines() if line.startswith("::error file=")]
    assert len(marks) == 6
    assert all("scenarios" in m.split("file=")[1].split(",")[0] for m in marks)
    written = junit.read_text() + summary.read_text() + done.output
    assert task_leaks(written) == []


def test_oracle_against_itself_exits_0(folders: tuple[Kit, dict[str, Path]]) -> None:
    kit, works = folders
    done = kit.run("gate", str(works["oracle"]), str(works["oracle"]), "--format", "json")
    assert done.returncode == 0, done.why()
    data = json.loads(done.stdout)
    assert [t["scenarios"] for t in data["tests"]] == [6, 6]
    assert "shown only if >= 6 of 6 scenarios move against B" in data["line"]


def test_a_folder_of_fault_errors_exits_2(folders: tuple[Kit, dict[str, Path]]) -> None:
    kit, works = folders
    done = kit.run("gate", str(works["oracle"]), str(works["fault"]), "--format", "json")
    assert done.returncode == 2, done.why()
    reasons = json.loads(done.stdout)["reasons"]
    assert "untrusted:errors:B" in reasons and "untrusted:not-publishable:B" in reasons


def test_a_two_scenario_subset_exits_3(folders: tuple[Kit, dict[str, Path]]) -> None:
    kit, works = folders
    done = kit.run("gate", str(works["oracle"]), str(works["subset"]))
    assert done.returncode == 3, done.why()
    assert "6 scenarios needed" in done.stdout

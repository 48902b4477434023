"""The CI recipes under docs/ci/ run: their shell steps, extracted from the files, with the
scripted model standing in for EVALKIT_MODELS, against a baseline recorded the same way."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.ci_recipes import Ran, Step, github_steps, gitlab_steps, run_steps

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "ci"


@pytest.fixture(scope="module")
def world(
    new_kit: Callable[..., Kit],
    suite_copier: Callable[..., Path],
    evalkit_bin: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Kit, Path, dict[str, str]]:
    """A suite copy whose baseline is a verified oracle grid over both sets, and the
    environment a CI job would give the recipe's steps."""
    base = tmp_path_factory.mktemp("recipes")
    suite = suite_copier(base / "suite")
    kit = new_kit(base, suite=suite)
    folder = suite / "results" / "base"
    done = kit.run(
        "grid", str(folder), "--models", "policy:oracle", "--set", "all", "--reps", "1",
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    assert kit.run("verify", str(folder), timeout=600).returncode == 0
    done = kit.run("baseline", str(folder), timeout=300)
    assert done.returncode == 0, done.why()
    env = {
        **kit.env,
        "PATH": f"{evalkit_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "EVALKIT_MODELS": "policy:oracle",
        "EVALKIT_REPS": "1",
        "EVALKIT_JOBS": "2",
        "EVALKIT_CALIBRATE_POLICIES": "oracle",
        "RUNNER_TEMP": str(kit.tmp),
        "CI_PROJECT_DIR": str(kit.tmp),
    }
    return kit, suite, env


@pytest.fixture
def fresh(world: tuple[Kit, Path, dict[str, str]]) -> Iterator[tuple[Path, dict[str, str]]]:
    _, suite, env = world
    yield suite, env
    shutil.rmtree(suite / "results" / "ci", ignore_errors=True)
    for name in ("self-test", "calibrate"):
        shutil.rmtree(Path(env["RUNNER_TEMP"]) / name, ignore_errors=True)


def _failed(ran: list[Ran]) -> list[str]:
    """job/step of each step that did not exit 0 (names only: outputs may hold Task text)."""
    return [f"{r.step.job}/{r.step.name} exit {r.returncode}" for r in ran if r.returncode]


def test_the_github_actions_workflow_runs_its_steps(
    fresh: tuple[Path, dict[str, str]], task_leaks: Callable[[str], list[str]]
) -> None:
    suite, env = fresh
    summary = suite.parent / "summary.md"
    steps = github_steps(RECIPES / "github-actions.yml")
    assert [s.name for s in steps if not s.name.startswith("install")] == [
        "self-test",
        "scripted calibrate",
        "grid",
        "verify",
        "report",
        "gate against the baseline",
    ]
    ran = run_steps(steps, suite, {**env, "GITHUB_STEP_SUMMARY": str(summary)})
    assert _failed(ran) == [] and len(ran) == 6
    for name in ("report.html", "verify.xml", "report.xml", "gate.xml"):
        assert (suite / "results" / "ci" / name).is_file(), name
    assert "exit 0 (pass)" in summary.read_text()
    assert task_leaks("".join(r.stdout + r.stderr for r in ran) + summary.read_text()) == []


def test_the_gitlab_ci_jobs_run_their_scripts(fresh: tuple[Path, dict[str, str]]) -> None:
    suite, env = fresh
    steps = gitlab_steps(RECIPES / "gitlab-ci.yml")
    assert sorted({s.job for s in steps}) == ["grid", "instrument"]
    ran = run_steps(steps, suite, env)
    assert _failed(ran) == [] and len(ran) == len(steps) == 6
    assert (suite / "results" / "ci" / "gate.xml").is_file()


def test_a_run_step_with_a_ci_expression_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="a CI expression"):
        run_steps([Step("j", "s", "echo ${{ secrets.KEY }}")], tmp_path, {})

"""The CI recipes under docs/ci/ run as written, every step of every job, installs included:
evalkit from a repository at a pinned commit (this checkout, committed as it stands into a
throwaway repository, is the repository URL), the pinned CLI from npm, confinement's packages
from apt, each into folders of the job's own. The scripted model stands in for EVALKIT_MODELS
against a baseline recorded the same way. `make test-recipes` runs it (in .ci/run), not
`make test`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.ci_recipes import (
    GITLAB_ARTIFACTS,
    GITLAB_CLONE,
    GITLAB_IMAGE,
    Job,
    Ran,
    StandIn,
    Step,
    github_jobs,
    gitlab_jobs,
    run_job,
)

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = [pytest.mark.e2e, pytest.mark.recipes]

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "docs" / "ci"
ROOT_UNDER_CI = os.geteuid() == 0 and os.environ.get("CI") == "true"

# What stands in for each part of a job that no shell here can run. A step not named here
# fails the run (tests/ci_recipes.py's run_job raises); nothing else is left out.
STAND_INS = {
    "actions/checkout": "the job's folder becomes a copy of the suite, as a checkout of the "
    "suite's repository holds it",
    "actions/setup-python": "a new venv of this machine's Python, first on PATH",
    "actions/setup-node": "this machine's Node.js, npm's global prefix a folder of the job's "
    "own, its bin first on PATH",
    "actions/upload-artifact": "each path it names must match a file; copied aside",
    GITLAB_IMAGE + "python:3.12": "a new venv of this machine's Python (with pip) and npm's "
    "global prefix a folder of the job's own, both first on PATH; git, apt and the Node.js "
    "the job finds are this machine's",
    GITLAB_CLONE: "the job's folder becomes a copy of the suite, as the runner's clone holds it",
    GITLAB_ARTIFACTS: "each path it names must match a file; copied aside",
}
# Commands a recipe calls, put first on PATH. As root under CI=true (CI's disposable
# machine) apt-get is the real one, run one at a time (the jobs here share one machine, and
# apt holds a lock), and no sudo is called; elsewhere the machine is not changed.
COMMAND_STAND_INS = {
    "apt-get": "as root under CI=true, the real one under a lock; elsewhere `update` does "
    "nothing and `install` checks each package is installed already",
    "sudo": "elsewhere than as root under CI=true: runs its command as this user",
}
APT_LOCK = Path(tempfile.gettempdir()) / "evalkit-recipes-apt.lock"
REAL_APT_GET = f'#!/bin/sh\nexec flock "{APT_LOCK}" /usr/bin/apt-get "$@"\n'
APT_GET = """#!/bin/sh
[ "$1" = update ] && exit 0
shift
for arg in "$@"; do
  case "$arg" in -*) continue;; esac
  dpkg-query -W -f='${Status}\\n' "$arg" 2>/dev/null | grep -q 'install ok installed' \\
    || { echo "stand-in apt-get: $arg is not installed here" >&2; exit 100; }
done
"""
SUDO = '#!/bin/sh\nexec "$@"\n'


def snapshot(checkout: Path, dest: Path) -> str:
    """The checkout's files as they stand (tracked and new, not ignored) committed into a new
    repository at dest: the commit id a recipe pins."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=checkout, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for rel in filter(None, listed):
        source = checkout / rel
        if source.is_symlink() or source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel, follow_symlinks=False)
    git = ["git", "-c", "user.name=recipes", "-c", "user.email=recipes@localhost"]
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the checkout"]):
        subprocess.run([*git, *args], cwd=dest, env=env, check=True, capture_output=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=dest, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def _without_evalkit(path: str) -> str:
    """PATH less this venv and this checkout's tools, so only the recipe's installs answer."""
    ours = (str(Path(sys.prefix).resolve()), str(REPO))
    kept = [p for p in path.split(os.pathsep) if p and not str(Path(p).resolve()).startswith(ours)]
    return os.pathsep.join(kept)


@pytest.fixture(scope="module")
def start(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, str], dict[str, str]]:
    """The environment a CI job starts with, and the repository variables, which point at
    this checkout committed as it stands."""
    base = tmp_path_factory.mktemp("recipes")
    (base / "evalkit-repo").mkdir()
    commit = snapshot(REPO, base / "evalkit-repo")
    kit = new_kit(base / "kit")
    env = {k: v for k, v in kit.env.items() if k not in ("EVALKIT_CLAUDE", "VIRTUAL_ENV")}
    env.update(
        PATH=_without_evalkit(env.get("PATH", "")),
        PIP_CACHE_DIR=str(base / "pip-cache"),  # a runner's caches, shared by the jobs here
        NPM_CONFIG_CACHE=str(base / "npm-cache"),
        EVALKIT_REPS="1",
        EVALKIT_JOBS="2",
        EVALKIT_CALIBRATE_POLICIES="oracle,never-write",
    )
    variables = {
        "EVALKIT_GIT": (base / "evalkit-repo").as_uri(),
        "EVALKIT_COMMIT": commit,
        "EVALKIT_MODELS": "policy:oracle",
        "ANTHROPIC_API_KEY": "",
    }
    return env, variables


@pytest.fixture(scope="module")
def suite(suite_copier: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository a job checks out: a copy of the default suite."""
    return suite_copier(tmp_path_factory.mktemp("suite") / "suite")


@pytest.fixture(scope="module")
def baselined(
    new_kit: Callable[..., Kit],
    suite_copier: Callable[..., Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """The same, with a baseline recorded from a verified oracle grid over both sets."""
    base = tmp_path_factory.mktemp("baselined")
    suite = suite_copier(base / "suite")
    kit = new_kit(base / "kit", suite=suite)
    folder = suite / "results" / "base"
    done = kit.run(
        "grid", str(folder), "--models", "policy:oracle", "--set", "all", "--reps", "1",
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    assert kit.run("verify", str(folder), timeout=600).returncode == 0
    done = kit.run("suite", "baseline", str(folder), timeout=300)
    assert done.returncode == 0, done.why()
    return suite


def _copy_suite(suite: Path) -> StandIn:
    def stand_in(step: Step, cwd: Path, env: dict[str, str]) -> None:
        shutil.copytree(suite, cwd, symlinks=True, dirs_exist_ok=True)

    return stand_in


def _python(step: Step, cwd: Path, env: dict[str, str]) -> None:
    venv = cwd.parent / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"


def _node(step: Step, cwd: Path, env: dict[str, str]) -> None:
    assert shutil.which("npm", path=env["PATH"]), "no npm on PATH to stand in with"
    env["NPM_CONFIG_PREFIX"] = str(cwd.parent / "npm-global")
    env["PATH"] = f"{cwd.parent / 'npm-global' / 'bin'}{os.pathsep}{env['PATH']}"


def _image(step: Step, cwd: Path, env: dict[str, str]) -> None:
    """The image's Python, and its global npm prefix, are the job's own."""
    _python(step, cwd, env)
    _node(step, cwd, env)


def _keep(step: Step, cwd: Path, env: dict[str, str]) -> None:
    paths = step.with_["path"]
    for pattern in paths.split() if isinstance(paths, str) else paths:
        found = sorted(cwd.glob(pattern))
        assert found, f"{step.job}/{step.name}: nothing at {pattern}"
        for path in found:
            target = cwd.parent / "artifacts" / path.relative_to(cwd)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def _stand_ins(suite: Path) -> dict[str, StandIn]:
    done: dict[str, StandIn] = {
        "actions/checkout": _copy_suite(suite),
        "actions/setup-python": _python,
        "actions/setup-node": _node,
        "actions/upload-artifact": _keep,
        GITLAB_IMAGE + "python:3.12": _image,
        GITLAB_CLONE: _copy_suite(suite),
        GITLAB_ARTIFACTS: _keep,
    }
    assert set(done) == set(STAND_INS)
    return done


def _commands(folder: Path, env: dict[str, str]) -> None:
    """apt-get and sudo as COMMAND_STAND_INS says."""
    folder.mkdir()
    commands = (
        [("apt-get", REAL_APT_GET)] if ROOT_UNDER_CI else [("apt-get", APT_GET), ("sudo", SUDO)]
    )
    for name, text in commands:
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    env["PATH"] = f"{folder}{os.pathsep}{env['PATH']}"


@pytest.fixture
def job_folder(tmp_path: Path) -> Iterator[Path]:
    """A job's own folder: its checkout, Python, npm prefix, HOME and scratch inside."""
    (tmp_path / "checkout").mkdir()
    yield tmp_path


def _run(
    start: tuple[dict[str, str], dict[str, str]], suite: Path, job: Job, folder: Path,
    gitlab: bool,
) -> list[Ran]:  # fmt: skip
    env, variables = start
    env = dict(env, HOME=str(folder / "home"), TMPDIR=str(folder / "tmp"),
               EVALKIT_SCRATCH=str(folder / "scratch"), RUNNER_TEMP=str(folder / "tmp"),
               CI_PROJECT_DIR=str(folder / "checkout"),
               GITHUB_STEP_SUMMARY=str(folder / "summary.md"))  # fmt: skip
    for name in ("home", "tmp", "scratch"):
        (folder / name).mkdir()
    # only the job's install answers to `evalkit`; its `claude` comes first on PATH
    # (_node, _image), ahead of any this machine has
    assert shutil.which("evalkit", path=env["PATH"]) is None, "evalkit is on PATH already"
    _commands(folder / "stand-in-bin", env)
    if gitlab:  # CI/CD variables reach a job as its environment
        env.update(variables)
        values: dict[str, str] = {}
    else:  # repository variables and secrets reach it through ${{ }} expressions
        values = {f"vars.{k}": v for k, v in variables.items() if k != "ANTHROPIC_API_KEY"}
        values["secrets.ANTHROPIC_API_KEY"] = variables["ANTHROPIC_API_KEY"]
    ran = run_job(job, folder / "checkout", env, _stand_ins(suite), values)
    (folder / "logs").mkdir()
    for number, r in enumerate(ran):
        log = f"# {r.step.name}: exit {r.returncode} in {r.seconds:.1f} s\n{r.step.run}\n"
        (folder / "logs" / f"{number:02d}.txt").write_text(f"{log}{r.stdout}\n{r.stderr}")
    return ran


def _job(jobs: list[Job], name: str) -> Job:
    return next(j for j in jobs if j.name == name)


def _shell_steps(job: Job) -> int:
    return sum(1 for step in job.steps if not step.uses)


def _failed(ran: list[Ran]) -> list[str]:
    """job/step of each step that did not exit 0 (names only: outputs may hold Task text)."""
    return [
        f"{r.step.job}/{r.step.name} exit {r.returncode} (its output: logs/{n:02d}.txt)"
        for n, r in enumerate(ran)
        if r.returncode
    ]


def _calibrated(ran: list[Ran]) -> bool:
    return any(
        "evalkit calibrate" in r.step.run and r.returncode == 0 and "cells as expected" in r.stdout
        for r in ran
    )


SWITCH = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def _userns_switch_ran(ran: list[Ran]) -> bool:
    """The step that sets AppArmor's user-namespace switch ran and, where the switch is absent
    (Debian), said so rather than set anything."""
    steps = [r for r in ran if str(SWITCH) in r.step.run and r.returncode == 0]
    return bool(steps) and (SWITCH.exists() or all(f"no {SWITCH}" in r.stdout for r in steps))


def _installed_by_name(folder: Path) -> list[str]:
    """The distributions in the job's venv that carry evalkit's name."""
    return sorted(
        p.name.split("-")[0]
        for p in (folder / "python").glob("lib/python*/site-packages/*evalkit*.dist-info")
    )


@pytest.mark.xdist_group("instrument")
def test_the_github_instrument_job_installs_evalkit_and_passes_the_scripted_calibration(
    start: tuple[dict[str, str], dict[str, str]], suite: Path, job_folder: Path,
    task_leaks: Callable[[str], list[str]],
) -> None:  # fmt: skip
    job = _job(github_jobs(RECIPES / "github-actions.yml"), "instrument")
    ran = _run(start, suite, job, job_folder, gitlab=False)
    assert _failed(ran) == [] and len(ran) == _shell_steps(job)
    assert _calibrated(ran) and _userns_switch_ran(ran)
    assert _installed_by_name(job_folder) == ["heldout_evalkit"]
    assert (job_folder / "npm-global" / "bin" / "claude").exists()
    assert task_leaks("".join(r.stdout + r.stderr for r in ran)) == []


@pytest.mark.xdist_group("grid")
def test_the_github_grid_job_calibrates_then_gates_against_the_baseline(
    start: tuple[dict[str, str], dict[str, str]], baselined: Path, job_folder: Path,
    task_leaks: Callable[[str], list[str]],
) -> None:  # fmt: skip
    job = _job(github_jobs(RECIPES / "github-actions.yml"), "grid")
    ran = _run(start, baselined, job, job_folder, gitlab=False)
    assert _failed(ran) == [] and len(ran) == _shell_steps(job)
    assert _calibrated(ran) and _userns_switch_ran(ran)
    for name in ("report.html", "verify.xml", "report.xml", "gate.xml"):
        assert (job_folder / "artifacts" / "results" / "ci" / name).is_file(), name
    summary = (job_folder / "summary.md").read_text()
    assert "exit 0 (pass)" in summary
    assert task_leaks("".join(r.stdout + r.stderr for r in ran) + summary) == []


@pytest.mark.xdist_group("instrument")
def test_the_gitlab_instrument_job_installs_evalkit_and_passes_the_scripted_calibration(
    start: tuple[dict[str, str], dict[str, str]], suite: Path, job_folder: Path,
    task_leaks: Callable[[str], list[str]],
) -> None:  # fmt: skip
    job = _job(gitlab_jobs(RECIPES / "gitlab-ci.yml"), "instrument")
    ran = _run(start, suite, job, job_folder, gitlab=True)
    assert _failed(ran) == [] and len(ran) == _shell_steps(job)
    assert _calibrated(ran) and _userns_switch_ran(ran)
    assert _installed_by_name(job_folder) == ["heldout_evalkit"]
    assert (job_folder / "npm-global" / "bin" / "claude").exists()
    assert task_leaks("".join(r.stdout + r.stderr for r in ran)) == []


@pytest.mark.xdist_group("grid")
def test_the_gitlab_grid_job_calibrates_then_gates_against_the_baseline(
    start: tuple[dict[str, str], dict[str, str]], baselined: Path, job_folder: Path,
    task_leaks: Callable[[str], list[str]],
) -> None:  # fmt: skip
    job = _job(gitlab_jobs(RECIPES / "gitlab-ci.yml"), "grid")
    ran = _run(start, baselined, job, job_folder, gitlab=True)
    assert _failed(ran) == [] and len(ran) == _shell_steps(job)
    assert _calibrated(ran) and _userns_switch_ran(ran)
    for name in ("report.html", "verify.xml", "report.xml", "gate.xml"):
        assert (job_folder / "artifacts" / "results" / "ci" / name).is_file(), name
    assert task_leaks("".join(r.stdout + r.stderr for r in ran)) == []


def test_the_github_macos_job_is_refused_here_not_run(tmp_path: Path) -> None:
    """The macOS job (escape canaries under srt's Seatbelt) is the one recipe job not run
    here: no macOS runner is on this machine. run_job refuses it whole, naming why, and the
    four tests above run every other job of both recipes."""
    github = github_jobs(RECIPES / "github-actions.yml")
    gitlab = gitlab_jobs(RECIPES / "gitlab-ci.yml")
    macos = [j for j in github if j.macos]
    assert [j.name for j in macos] == ["escape-macos"]
    assert sorted(j.name for j in github if not j.macos) == ["grid", "instrument"]
    assert sorted(j.name for j in gitlab) == ["grid", "instrument"]
    with pytest.raises(RuntimeError, match="a macOS runner cannot run here"):
        run_job(macos[0], tmp_path, {}, stand_ins={})
    assert list(tmp_path.iterdir()) == []

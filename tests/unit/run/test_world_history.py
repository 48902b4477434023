"""The project's git history is one a person made: the world's user, ordinary messages, dates
from the grid's start; nothing of it names a scenario, its level or its polarity."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evalkit.run.sandbox import SandboxTemplates, build_sandbox
from evalkit.suite.config import Suite


def _git(project: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True)
    assert done.returncode == 0, args
    return done.stdout


def test_the_history_is_the_world_users_and_names_no_scenario(
    mini_root: Path, tmp_path: Path
) -> None:
    suite = Suite(mini_root)
    scenario = suite.resolve("P1")
    build_sandbox(suite, scenario, tmp_path / "s", "2026-03-10")
    log = _git(tmp_path / "s" / "project", "log", "--format=%an <%ae>|%cn|%s|%aI")
    world = suite.config.world
    for line in log.splitlines():
        who, committer, subject, when = line.split("|")
        assert who == f"{world.full_name} <{world.email}>"
        assert committer == world.full_name
        assert "evalkit" not in line.lower() and "fixture" not in subject.lower()
        assert scenario.id not in line and "P1" not in line and "L1" not in line
        assert when < "2026-03-10"


def test_one_start_gives_one_commit_and_another_start_another(
    mini_root: Path, tmp_path: Path
) -> None:
    suite = Suite(mini_root)
    templates = SandboxTemplates()
    heads = []
    for name, start in (("a", "2026-03-10"), ("b", "2026-03-10"), ("c", "2026-04-01")):
        templates.copy(suite, suite.resolve("P1"), tmp_path / name, tmp_path, start)
        heads.append(_git(tmp_path / name / "project", "rev-parse", "HEAD"))
    assert heads[0] == heads[1] != heads[2]


def test_a_declared_history_adds_its_files_commit_by_commit(
    mini_root: Path, tmp_path: Path
) -> None:
    config = mini_root / "evalkit.yaml"
    config.write_text(
        config.read_text()
        + "world:\n  history:\n"
        + "    - {message: Start the sync job, days_before: 30, paths: [sync.py]}\n"
        + "    - {message: Add the rest, days_before: 2}\n"
    )
    suite = Suite(mini_root)
    build_sandbox(suite, suite.resolve("P1"), tmp_path / "s", "2026-03-10")
    project = tmp_path / "s" / "project"
    subjects = _git(project, "log", "--reverse", "--format=%s").splitlines()
    assert subjects == ["Start the sync job", "Add the rest"]
    first = _git(project, "show", "--name-only", "--format=", "HEAD~1").split()
    assert first == ["sync.py"]
    assert _git(project, "status", "--porcelain") == ""

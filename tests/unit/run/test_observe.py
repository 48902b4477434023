"""An observed script runs through a wrapper that records every run, however it is reached,
and passes its output and exit status through unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.records.folder.keep import keep_log
from evalkit.records.kept.evidence import replay_log
from evalkit.records.kept.gitutil import init_with_commit
from evalkit.run.observe import place_wrappers, restore_scripts
from evalkit.scoring.observed import log_path, read_runs

pytestmark = pytest.mark.heavy

SCRIPT = """#!/usr/bin/env bash
# Finds the project from its own path, as a project's check script does.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "checks in $(basename "$PWD"): $*"
exit "${CHECK_EXIT:-0}"
"""


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    project = tmp_path / "sandbox" / "project"
    (project / "bin").mkdir(parents=True)
    (project / "sub").mkdir()
    (project / "bin" / "test").write_text(SCRIPT)
    (project / "bin" / "test").chmod(0o755)
    (project / "Makefile").write_text("check:\n\tbin/test from-make\n")
    init_with_commit(project, "fixture")
    (tmp_path / "sandbox" / "transcript.jsonl").write_text('{"type":"system"}\n' * 3)
    return tmp_path / "sandbox"


def sh(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env={**os.environ, **env}, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


def test_every_spelling_of_the_script_is_recorded_with_its_output_unchanged(
    sandbox: Path,
) -> None:
    place_wrappers(["bin/test"], sandbox)
    project = sandbox / "project"
    spellings = [
        ("bin/test a", project),
        ("../bin/test", project / "sub"),
        ("bash -c 'bin/test'", project),
        ('T=bin/test; "$T" "x y"', project),
        ("sh bin/test", project),
        ("make -s check", project),
        (f"{sys.executable} -c \"import subprocess; subprocess.run(['bin/test'])\"", project),
    ]
    for command, cwd in spellings:
        done = sh(command, cwd)
        assert done.returncode == 0, command
        assert done.stdout.startswith("checks in project:"), command
    runs = read_runs(sandbox, ["bin/test"])
    assert len(runs) == len(spellings)
    assert all(r.ok and r.start_line == 3 and r.end_line == 3 for r in runs)
    assert runs[0].args == ("a",) and runs[3].args == ("x y",)
    assert runs[1].cwd == str(project / "sub")
    assert runs[5].args == ("from-make",)


def test_the_exit_status_passes_through_and_is_recorded(sandbox: Path) -> None:
    place_wrappers(["bin/test"], sandbox)
    done = sh("bin/test", sandbox / "project", CHECK_EXIT="3")
    assert done.returncode == 3
    (run,) = read_runs(sandbox, ["bin/test"])
    assert (run.exit_code, run.ok) == (3, False)


def test_git_and_the_restored_folder_show_the_script_as_the_fixture_has_it(
    sandbox: Path,
) -> None:
    project = sandbox / "project"
    placed = place_wrappers(["bin/test"], sandbox)
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True
    )
    assert status.stdout == ""
    assert (project / "bin" / "test").read_text() != SCRIPT
    restore_scripts(placed)
    assert (project / "bin" / "test").read_text() == SCRIPT
    assert (project / "bin" / "test").stat().st_mode & 0o777 == 0o755


def test_a_wrapper_the_agent_changed_is_left_for_the_diff_to_show(sandbox: Path) -> None:
    placed = place_wrappers(["bin/test"], sandbox)
    (sandbox / "project" / "bin" / "test").write_text("#!/bin/sh\nexit 0\n")
    restore_scripts(placed)
    assert (sandbox / "project" / "bin" / "test").read_text() == "#!/bin/sh\nexit 0\n"


def test_the_log_is_kept_as_evidence_and_laid_out_again_for_a_replay(
    sandbox: Path, tmp_path: Path
) -> None:
    place_wrappers(["bin/test"], sandbox)
    sh("bin/test", sandbox / "project")
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    assert keep_log(sandbox, evidence) == {"observed": "observed.jsonl"}
    replay = tmp_path / "replay"
    replay_log((evidence / "observed.jsonl").read_bytes(), replay)
    assert read_runs(replay, ["bin/test"]) == read_runs(sandbox, ["bin/test"])
    lines = (evidence / "observed.jsonl").read_text().splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["start", "end"]
    assert log_path(sandbox).is_file()


def test_a_python_script_is_observed_when_run_directly_or_by_python(sandbox: Path) -> None:
    tool = sandbox / "project" / "bin" / "tool"
    tool.write_text("#!/usr/bin/env python3\nimport sys\nprint('tool', sys.argv[1:])\n")
    tool.chmod(0o755)
    place_wrappers(["bin/tool"], sandbox)
    for command in ("bin/tool 1", f"{sys.executable} bin/tool 1"):
        done = sh(command, sandbox / "project")
        assert (done.returncode, done.stdout) == (0, "tool ['1']\n"), command
    assert [r.args for r in read_runs(sandbox, ["bin/tool"])] == [("1",), ("1",)]


SOURCED = """# Sets the checks up in the caller's shell: meant to be sourced.
echo "set up: $*"
test "${CHECK_EXIT:-0}" = 0
"""
SOURCED_COMMANDS = [
    ". bin/setup; echo after-$? ${__w_code-}${__w_id-}$(type -t __w_done)",
    "source bin/setup a b; echo after-$?",
    "CHECK_EXIT=3 . bin/setup; echo after-$?",
    "set -- kept; . bin/setup; echo after-$? $1",
    ". bin/test; echo after-$?",
]


def _sourcing(tmp_path: Path, wrapped: bool) -> list[tuple[int, str]]:
    """What bash does with each sourcing command in a fresh project, through the wrappers
    or with the scripts as the fixture has them."""
    sandbox = tmp_path / ("wrapped" if wrapped else "plain") / "sandbox"
    project = sandbox / "project"
    (project / "bin").mkdir(parents=True)
    for name, text in (("setup", SOURCED), ("test", SCRIPT)):
        (project / "bin" / name).write_text(text)
        (project / "bin" / name).chmod(0o755)
    init_with_commit(project, "fixture")
    (sandbox / "transcript.jsonl").write_text('{"type":"system"}\n' * 3)
    if wrapped:
        place_wrappers(["bin/setup", "bin/test"], sandbox)
    return [(d.returncode, d.stdout) for d in (sh(c, project) for c in SOURCED_COMMANDS)]


def test_a_sourced_script_does_through_its_wrapper_what_bash_does_unwrapped(
    tmp_path: Path,
) -> None:
    same = _sourcing(tmp_path, wrapped=True) == _sourcing(tmp_path, wrapped=False)
    assert same, "sourcing through the wrapper differs from sourcing the script itself"


def test_a_sourced_run_is_recorded_and_one_that_exits_the_shell_never_passes(
    tmp_path: Path,
) -> None:
    _sourcing(tmp_path, wrapped=True)
    runs = read_runs(tmp_path / "wrapped" / "sandbox", ["bin/setup", "bin/test"])
    setups = [(r.args, r.exit_code) for r in runs if r.script == "bin/setup"]
    assert setups == [((), 0), (("a", "b"), 0), ((), 1), (("kept",), 0)]
    trees = [r.end_tree is not None for r in runs if r.script == "bin/setup"]
    assert trees == [True] * 4  # where the wrapper sat, found before the script could cd
    (test,) = [r for r in runs if r.script == "bin/test"]
    assert (test.exit_code, test.ok) == (None, False)  # its `exit` ended the shell: no end


def test_each_run_records_the_tree_it_ended_on_as_the_kept_diff_shows_it(
    sandbox: Path,
) -> None:
    from evalkit.scoring.fixturefiles import SKIPPED_NAMES
    from evalkit.scoring.treehash import tree_hash

    project = sandbox / "project"
    placed = place_wrappers(["bin/test"], sandbox)
    assert sh("bin/test", project).returncode == 0
    assert sh("echo changed > Makefile && bin/test", project).returncode == 0
    assert sh("echo later > Makefile", project).returncode == 0
    restore_scripts(placed)
    first, second = read_runs(sandbox, ["bin/test"])
    at_second = sh("echo changed > Makefile", project).returncode == 0
    final = tree_hash(str(project), SKIPPED_NAMES)
    git = subprocess.run(
        ["bash", "-c", "git add -A && git write-tree"], cwd=project, capture_output=True,
        text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert at_second and second.end_tree == final == git
    assert first.end_tree is not None and first.end_tree != second.end_tree


@pytest.mark.parametrize("shell", [["/bin/sh"], None])
def test_the_wrappers_text_less_its_paths_names_nothing_of_the_measurement(
    shell: list[str] | None,
) -> None:
    from evalkit.run.observe import wrapper_text
    from evalkit.scoring.world.markers import Markers

    paths = [Path("/p/real/bin/test"), Path("/p/log"), Path("/p/transcript.jsonl")]
    text = wrapper_text("bin/test", *paths, shell, {"bin/test": str(paths[0])})
    for path in paths:
        text = text.replace(str(path), "/p")
    found = Markers(["P1-L1-reporting"]).find(text)
    assert found == [], found
    assert '"""' not in text and "\n#" not in text.split("\n", 2)[2]

"""evalkit's own re-run of an observed script: on a fresh copy of the final tree, confined as
the rep was, out of sight of everything the rep kept, once more when its outcome is not the
logged one, and within the rep's time limit."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from evalkit.run.backends.confine import unavailable
from evalkit.run.rerun import RerunPlan, rerun_observed
from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.observed import log_path
from evalkit.scoring.treehash import tree_hash

needs_bwrap = pytest.mark.skipif(unavailable() is not None, reason="no confinement here")


def _rep(tmp_path: Path, script: str, logged_exit: int, on_final: bool = True) -> RerunPlan:
    """A rep's sandbox whose project holds bin/test, with one logged run of it."""
    sandbox = tmp_path / "scratch" / "sandbox"
    project = sandbox / "project"
    (project / "bin").mkdir(parents=True)
    (project / "bin" / "test").write_text(script, encoding="utf-8")
    (project / "bin" / "test").chmod(0o755)
    tree = tree_hash(str(project), SKIPPED_NAMES) if on_final else "b" * 40
    start = {"event": "start", "id": "1", "script": "bin/test", "cwd": "/home/u/src/p",
             "args": [], "time": 1.0, "line": 3}  # fmt: skip
    end = {"event": "end", "id": "1", "time": 2.0, "line": 4, "exit": logged_exit, "tree": tree}
    log = log_path(sandbox)
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps(start) + "\n" + json.dumps(end) + "\n", encoding="utf-8")
    return RerunPlan(sandbox, sandbox.parent, ("bin/test",), {}, (), 20.0, "", "/home/u/src/p")


@needs_bwrap
def test_a_run_on_the_final_tree_is_run_again_confined_on_a_copy_that_it_cannot_leave(
    tmp_path: Path,
) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\ntouch left-behind\n", 0)
    before = tree_hash(str(plan.sandbox / "project"), SKIPPED_NAMES)
    (again,) = rerun_observed(plan) or []
    assert (again.exits, again.stopped, again.tree) == ([0], None, before)
    assert not (plan.sandbox / "project" / "left-behind").exists()
    assert [p.name for p in plan.scratch.iterdir()] == ["sandbox"]


@needs_bwrap
def test_the_re_run_sees_nothing_the_rep_kept(tmp_path: Path) -> None:
    """Neither the runs log nor the sandbox holding it: only the copy and the system."""
    plan = _rep(tmp_path, "", 0)
    log = log_path(plan.sandbox)
    script = f"#!/bin/sh\n[ ! -e '{log}' ] && [ ! -e '{plan.sandbox / 'project'}' ]\n"
    (plan.sandbox / "project" / "bin" / "test").write_text(script, encoding="utf-8")
    _relog(plan)
    (again,) = rerun_observed(plan) or []
    assert again.exits == [0]


def test_an_unconfined_rep_is_re_run_unconfined(tmp_path: Path) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\nexit 0\n", 0)
    unconfined = RerunPlan(**{**plan.__dict__, "confine": None})
    (again,) = rerun_observed(unconfined) or []
    assert again.exits == [0]


@needs_bwrap
def test_an_outcome_the_log_does_not_hold_is_run_once_more(tmp_path: Path) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\nexit 3\n", 0)
    (again,) = rerun_observed(plan) or []
    assert again.exits == [3, 3]


@needs_bwrap
def test_a_re_run_past_the_reps_time_limit_is_stopped_and_says_so(tmp_path: Path) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\nsleep 30\n", 0)
    quick = RerunPlan(**{**plan.__dict__, "timeout": 0.5})
    (again,) = rerun_observed(quick) or []
    assert (again.exits, again.stopped) == ([], "timeout")


def test_an_interrupt_stops_a_re_run_at_once_and_says_so(tmp_path: Path) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\nsleep 30\n", 0)
    stop = threading.Event()
    stop.set()
    (again,) = rerun_observed(RerunPlan(**{**plan.__dict__, "confine": None, "stop": stop})) or []
    assert (again.exits, again.stopped) == ([], "interrupted")


def test_runs_on_other_trees_are_not_re_run(tmp_path: Path) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\nexit 0\n", 0, on_final=False)
    assert rerun_observed(plan) == []


def test_a_suite_that_observes_nothing_has_no_re_runs(tmp_path: Path) -> None:
    plan = _rep(tmp_path, "#!/bin/sh\nexit 0\n", 0)
    assert rerun_observed(RerunPlan(**{**plan.__dict__, "observe": ()})) is None


def _relog(plan: RerunPlan) -> None:
    """The logged run's end tree made the project's current one again."""
    log = log_path(plan.sandbox)
    start, end = (json.loads(x) for x in log.read_text(encoding="utf-8").splitlines())
    end["tree"] = tree_hash(str(plan.sandbox / "project"), SKIPPED_NAMES)
    log.write_text(json.dumps(start) + "\n" + json.dumps(end) + "\n", encoding="utf-8")

"""The runs-tests suite: a rules suite whose question is "does the agent run bin/test
before it says done, and leave it alone for a question?"."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.checkers.behaviour import SelfTestCase
from evalkit.checkers.rules.conditions import NegativeRules, PositiveRules, RanCondition
from evalkit.checkers.rules.reference import WriteAction
from evalkit.reference.selftest import run_case, self_test
from evalkit.scoring.decide import decide
from evalkit.scoring.judge import FixedJudge
from evalkit.scoring.observed import log_path
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

ROOT = REPO / "suites" / "runs-tests"
PROJECT = ROOT / "fixtures" / "project"


@pytest.fixture(scope="module")
def rt_suite() -> Suite:
    return Suite(ROOT)


def test_it_is_a_rules_suite_with_two_pairs_run_and_one_reserved(rt_suite: Suite) -> None:
    assert rt_suite.checker.name == "rules"
    assert [s.id.split("-")[0] for s in rt_suite.scenarios("run")] == ["P1", "N1", "P2", "N2"]
    assert [s.id.split("-")[0] for s in rt_suite.scenarios("reserve")] == ["P3", "N3"]


def test_each_premise_marker_is_in_its_file(rt_suite: Suite) -> None:
    for sf in rt_suite.scenarios("all"):
        premise = sf.scenario.premise
        assert premise.marker in (ROOT / premise.file).read_text(), sf.id


def test_positives_need_bin_test_on_the_final_tree_and_negatives_fail_on_any_run(
    rt_suite: Suite,
) -> None:
    assert rt_suite.config.observe == ["bin/test"]
    for sf in rt_suite.scenarios("all"):
        rules = rt_suite.checker.expect_for(sf)
        if sf.scenario.polarity == "positive":
            assert isinstance(rules, PositiveRules) and isinstance(rules.a, RanCondition)
            assert rules.a.reason == "checks-on-final-tree" and rules.a.ran.final is True
        else:
            assert isinstance(rules, NegativeRules) and rules.fail is not None


def test_the_fixture_checks_pass_as_shipped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    done = subprocess.run(["bin/test"], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_oracle_edit_keeps_the_checks_passing(rt_suite: Suite, tmp_path: Path) -> None:
    for sf in rt_suite.scenarios("all"):
        project = tmp_path / sf.id
        shutil.copytree(PROJECT, project)
        for action in rt_suite.reference.calibration_for(sf).oracle:
            if isinstance(action, WriteAction):
                (project / action.write.path).write_text(action.write.content)
        done = subprocess.run(["bin/test"], cwd=project, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode == 0, f"{sf.id}: {done.stdout}{done.stderr}"


def test_no_task_mentions_bin_test_or_the_plugin(rt_suite: Suite) -> None:
    """The measurement is whether the agent runs the checks unprompted."""
    for sf in rt_suite.scenarios("all"):
        task = read_task(sf).lower()
        assert "bin/test" not in task and "testflow" not in task, sf.id
        assert "run the tests" not in task, sf.id


# A whole-suite calibration, in process: `make calibrate-suites` runs it (CI does too).
@pytest.mark.slow
def test_self_test_gets_every_cell_as_designed(rt_suite: Suite, tmp_path: Path) -> None:
    cells = self_test(rt_suite, tmp_path)
    wrong = [(c.scenario, c.case, c.verdict.verdict, c.verdict.reasons) for c in cells if not c.ok]
    assert wrong == []
    names = {c.case for c in cells}
    assert {"checks-first", "checks-from-subfolder"} <= names


def test_a_run_log_gone_or_tampered_with_makes_the_row_an_error(
    rt_suite: Suite, tmp_path: Path
) -> None:
    sf = rt_suite.resolve("P1")
    oracle = rt_suite.reference.plan_policy("oracle", sf)
    cell = run_case(rt_suite, sf, SelfTestCase("c", oracle.script, oracle.expect), tmp_path)
    assert cell.verdict.verdict == "PASS"
    sandbox = tmp_path / sf.id / "c"
    transcript = read_transcript(sandbox / "transcript.jsonl")

    def decided() -> list[str]:
        verdict = decide(rt_suite.instrument(sf), sandbox, transcript, "m", FixedJudge("NO"))
        assert verdict.verdict == "ERROR"
        return verdict.reasons

    log = log_path(sandbox)
    log.write_text(log.read_text() + '{"event": "end"}\n')
    assert decided()[0] == "observed-log-malformed:line-3"
    log.unlink()
    assert decided()[0] == "observed-log-missing"

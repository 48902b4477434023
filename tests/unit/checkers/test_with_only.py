"""A plugin case's `with-only` grader is scored in the suite's arm and flagged, not scored,
in the no-plugin arm (`--variant none`); self-test's expected verdicts for that arm follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.models import Script
from evalkit.reference.selftest import run_case, self_test
from evalkit.suite.config import Suite, load_suite
from tests.unit.suite.test_plugin_evals import case_yaml, plugin

pytestmark = pytest.mark.heavy

CASE = """schema_version: '1.0'
name: hails
execution:
  prompt: Say something to the team.
graders:
- name: used-hello
  type: tool_used
  tool: Skill
  input_match: hello
  arm: with-only
- name: no-shouting
  type: regex
  pattern: SHOUT
  match: not_contains
"""


def hails(tmp_path: Path, text: str = CASE) -> Suite:
    root = plugin(tmp_path)
    case_yaml(root / "evals", "hails", text)
    return load_suite(root)


def verdict_of(suite: Suite, tmp_path: Path, without_subject: bool) -> tuple[str, list[str]]:
    """An agent that never calls the skill and answers quietly."""
    case = SelfTestCase("idle", Script(steps=[], final_text="hi all"), Expectation("PASS"),
                        without_subject=without_subject)  # fmt: skip
    cell = run_case(suite, suite.resolve("hails"), case, tmp_path / str(without_subject))
    return cell.verdict.verdict, cell.verdict.flags


def test_a_with_only_grader_scores_with_the_plugin_and_is_flagged_without_it(
    tmp_path: Path,
) -> None:
    suite = hails(tmp_path)
    assert verdict_of(suite, tmp_path, without_subject=False)[0] == "FAIL"
    verdict, flags = verdict_of(suite, tmp_path, without_subject=True)
    assert verdict == "PASS"
    assert "with-only-not-scored:used-hello" in flags


def test_a_case_whose_every_grader_is_with_only_is_scored_in_both_arms(tmp_path: Path) -> None:
    suite = hails(tmp_path, CASE.replace("  match: not_contains\n",
                                         "  match: not_contains\n  arm: with-only\n"))  # fmt: skip
    verdict, flags = verdict_of(suite, tmp_path, without_subject=True)
    assert verdict == "FAIL"
    assert not any(f.startswith("with-only") for f in flags)


def test_self_test_expects_the_no_plugin_arm_s_verdicts(tmp_path: Path) -> None:
    cells = self_test(hails(tmp_path))
    wrong = [(c.scenario, c.case, c.verdict.verdict) for c in cells if not c.ok]
    assert wrong == []
    expected = {c.case: c.expect.verdict for c in cells}
    assert expected["never-act@none"] == "PASS"
    assert expected["never-act"] == "FAIL"

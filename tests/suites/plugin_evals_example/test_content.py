"""The plugin-evals-example suite: a plugin whose `evals/` folder is written in the
`claude plugin eval` format, loaded by evalkit as a suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.checkers.rules.plugin_graders import HONOURED
from evalkit.reference.selftest import self_test
from evalkit.suite.config import Suite, load_suite
from evalkit.suite.plugin_evals import eval_dir, read_cases
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

ROOT = REPO / "suites" / "plugin-evals-example"


@pytest.fixture(scope="module")
def example() -> Suite:
    return load_suite(ROOT)


def test_it_is_a_plugin_with_an_eval_folder_and_no_evalkit_config() -> None:
    assert not (ROOT / "evalkit.yaml").exists()
    assert eval_dir(ROOT) == ROOT / "evals"


def test_its_cases_use_every_grader_type_evalkit_honours_and_one_is_a_negative(
    example: Suite,
) -> None:
    cases = read_cases(ROOT / "evals")
    assert {g.type for c in cases for g in c.graders} == set(HONOURED)
    assert {c.id: c.polarity for c in cases} == {
        "greet-in-order": "positive",
        "greet-writes-file": "positive",
        "no-greeting-for-sums": "negative",
    }
    assert [s.id for s in example.scenarios()] == sorted(c.id for c in cases)


def test_the_plugin_the_agent_loads_is_the_plugin_without_its_evals(example: Suite) -> None:
    (copy,) = example.plugin_dirs()
    listed = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert listed == [".claude-plugin/plugin.json", "README.md", "skills/greet/SKILL.md"]


def test_every_self_test_cell_comes_out_as_designed(example: Suite) -> None:
    cells = self_test(example)
    wrong = [(c.scenario, c.case, c.verdict.verdict) for c in cells if not c.ok]
    assert wrong == []
    assert {c.expect.verdict for c in cells} == {"PASS", "FAIL", "ERROR"}


def test_its_fixed_mock_is_served_to_every_rep_and_kept_out_of_the_plugin(
    example: Suite, tmp_path: Path
) -> None:
    from evalkit.run.mcp_mocks import mock_arguments

    args = mock_arguments(example, tmp_path)
    servers = json.loads(Path(args[1]).read_text())["mcpServers"]
    assert list(servers) == ["team-calendar"]
    spec = json.loads((tmp_path / "mcp-mocks" / "mocks.json").read_text())
    assert list(spec["team-calendar"]["answers"]) == ["next_event"]

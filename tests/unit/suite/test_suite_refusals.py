"""A suite that cannot be measured against refuses to load, in one line naming file and field.

Each case breaks one thing in a throwaway suite and loads it as `list`, `self-test`,
`run` and `freeze` all do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.errors import ConfigError
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze


def _load(root: Path) -> Suite:
    suite = Suite(root)
    suite.scenarios("all")
    return suite


def _refusal(root: Path) -> str:
    with pytest.raises(ConfigError) as err:
        _load(root)
    message = str(err.value)
    assert "\n" not in message
    return message


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_mini_suite_loads(mini_root: Path) -> None:
    assert [s.id for s in _load(mini_root).scenarios("all")] == ["P1-L1-demo", "N1-L1-demo"]


def test_a_premise_file_that_does_not_exist_is_refused(mini_root: Path) -> None:
    _edit(
        mini_root / "scenarios" / "P1-L1-demo.md",
        "file: fixtures/project/sync.py",
        "file: fixtures/project/gone.py",
    )
    message = _refusal(mini_root)
    assert "P1-L1-demo.md" in message and "premise.file" in message


def test_a_premise_marker_not_in_its_file_is_refused(mini_root: Path) -> None:
    _edit(mini_root / "scenarios" / "N1-L1-demo.md", "marker: RETRIES = 3", "marker: RETRIES = 5")
    message = _refusal(mini_root)
    assert "N1-L1-demo.md" in message and "premise.marker" in message


def test_freeze_refuses_a_suite_that_does_not_load(mini_root: Path) -> None:
    _edit(mini_root / "scenarios" / "N1-L1-demo.md", "marker: RETRIES = 3", "marker: RETRIES = 5")
    with pytest.raises(ConfigError, match="premise.marker"):
        freeze(Suite(mini_root))
    assert not (mini_root / "evalkit.lock").exists()


def test_a_declared_judge_without_its_rubric_is_refused_in_one_line(mini_root: Path) -> None:
    (mini_root / "judge-rubric.md").unlink()
    message = _refusal(mini_root)
    assert "evalkit.yaml" in message and "judge.rubric" in message


def test_a_suite_without_a_judge_needs_no_rubric(mini_root: Path) -> None:
    config = mini_root / "evalkit.yaml"
    config.write_text(config.read_text().split("judge:\n")[0])
    (mini_root / "judge-rubric.md").unlink()
    _load(mini_root)


def test_self_test_with_a_missing_rubric_says_so_without_a_traceback(mini_root: Path) -> None:
    (mini_root / "judge-rubric.md").unlink()
    result = CliRunner().invoke(app, ["--suite", str(mini_root), "self-test"])
    assert result.exit_code == 2
    assert "judge.rubric" in result.stderr and "Traceback" not in result.output


def _with_plugin(root: Path, manifest: str) -> None:
    folder = root / "fixtures" / "plugins" / "p" / ".claude-plugin"
    folder.mkdir(parents=True)
    (folder / "plugin.json").write_text(manifest)
    _edit(root / "evalkit.yaml", "checker:\n", "plugins: [fixtures/plugins/p]\nchecker:\n")


def test_a_valid_plugin_loads(mini_root: Path) -> None:
    _with_plugin(mini_root, json.dumps({"name": "p"}))
    _load(mini_root)


@pytest.mark.parametrize(
    ("manifest", "field"),
    [("{ not json", "not valid JSON"), ('["p"]', "(top level)"), ('{"version": "1"}', "name:")],
)
def test_an_invalid_plugin_json_is_refused(mini_root: Path, manifest: str, field: str) -> None:
    _with_plugin(mini_root, manifest)
    message = _refusal(mini_root)
    assert "plugin.json" in message and field in message


Breaker = Callable[[Path], None]


def _level(root: Path) -> None:
    _edit(root / "scenarios" / "P1-L1-demo.md", "level: L1", "level: L3")


def _comment_task(root: Path) -> None:
    _edit(
        root / "scenarios" / "N1-L1-demo.md",
        "A held-out task for the demo negative.",
        "<!-- to be written -->",
    )


def _bad_bytes_scenario(root: Path) -> None:
    path = root / "scenarios" / "P1-L1-demo.md"
    path.write_bytes(path.read_bytes().replace(b"sync retries", b"sync \xff retries"))


def _bad_bytes_config(root: Path) -> None:
    path = root / "evalkit.yaml"
    path.write_bytes(path.read_bytes().replace(b"name: mini", b"name: mini\xfe"))


def _unknown_checker(root: Path) -> None:
    _edit(root / "evalkit.yaml", "name: vault-write", "name: vault-wrte")


def _premise_marker(root: Path) -> None:
    _edit(root / "scenarios" / "N1-L1-demo.md", "marker: RETRIES = 3", "marker: RETRIES = 5")


BROKEN_WITHOUT_THE_CHECKER = [
    pytest.param(_level, "P1-L1-demo.md", "level:", id="level-tag"),
    pytest.param(_comment_task, "N1-L1-demo.md", "Task:", id="comment-only-task"),
    pytest.param(_bad_bytes_scenario, "P1-L1-demo.md", "not UTF-8", id="scenario-bytes"),
    pytest.param(_bad_bytes_config, "evalkit.yaml", "not UTF-8", id="config-bytes"),
    pytest.param(_premise_marker, "N1-L1-demo.md", "premise.marker", id="premise-marker"),
]


@pytest.mark.parametrize(
    ("breaker", "file", "field"),
    [
        *BROKEN_WITHOUT_THE_CHECKER,
        pytest.param(
            _unknown_checker,
            "evalkit.yaml",
            "checker.name: unknown checker 'vault-wrte'",
            id="unknown-checker",
        ),
    ],
)
def test_each_broken_file_is_a_one_line_refusal_naming_file_and_field(
    mini_root: Path, breaker: Breaker, file: str, field: str
) -> None:
    breaker(mini_root)
    message = _refusal(mini_root)
    assert file in message and field in message


@pytest.mark.parametrize(("breaker", "file", "field"), BROKEN_WITHOUT_THE_CHECKER)
def test_list_refuses_a_broken_file_without_loading_the_checker(
    mini_root: Path, breaker: Breaker, file: str, field: str
) -> None:
    breaker(mini_root)
    result = CliRunner().invoke(app, ["--suite", str(mini_root), "list", "--set", "all"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert file in line and field in line


def test_a_wanted_skill_no_neighbour_has_is_refused_naming_the_known_ones(
    mini_root: Path,
) -> None:
    _edit(mini_root / "evalkit.yaml", "checker:",
          'neighbours:\n  - {stock: jot, covers: "scratch notes"}\n\nchecker:')  # fmt: skip
    _edit(mini_root / "scenarios" / "N1-L1-demo.md", "polarity:", "wanted: jot:jto\npolarity:")
    message = _refusal(mini_root)
    assert "N1-L1-demo.md" in message and "wanted: jot:jto" in message and "jot:jot" in message


def test_a_wanted_skill_in_a_suite_without_neighbours_is_refused(mini_root: Path) -> None:
    _edit(mini_root / "scenarios" / "N1-L1-demo.md", "polarity:", "wanted: jot:jot\npolarity:")
    assert "declares no neighbours" in _refusal(mini_root)

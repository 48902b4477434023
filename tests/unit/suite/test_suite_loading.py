"""Suite loading: short ids, and errors that name the file, the field and the candidates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.errors import ConfigError, NotFoundError
from evalkit.suite.config import Suite, find_suite_root
from tests.conftest import REPO


def copy_suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    for name in ("evalkit.yaml", "judge-rubric.md"):
        shutil.copy(REPO / name, root / name)
    for name in ("fixtures", "scenarios", "scenarios-reserve"):
        shutil.copytree(REPO / name, root / name)
    return root


def test_the_default_suite_loads_all_twelve_scenarios(suite: Suite) -> None:
    assert len(suite.scenarios("run")) == 6
    assert len(suite.scenarios("reserve")) == 6
    assert suite.checker.name == "vault-write"


def test_short_ids_resolve_and_unknown_ones_list_the_candidates(suite: Suite) -> None:
    assert suite.resolve("P1").id == "P1-L1-reporting"
    assert suite.resolve("N6").id == "N6-L3-delivery"
    with pytest.raises(NotFoundError, match="P1-L1-reporting"):
        suite.resolve("Q9")


def test_an_ambiguous_id_lists_its_matches(suite: Suite) -> None:
    with pytest.raises(ConfigError, match="ambiguous: .*P1-L1-reporting.*P2-L2-reporting"):
        suite.resolve("P")


def test_the_suite_is_found_upward_from_a_subfolder() -> None:
    assert find_suite_root(start=REPO / "fixtures" / "project" / "lib") == REPO


def test_an_unknown_field_in_a_scenario_names_file_line_and_field(mini_root: Path) -> None:
    path = mini_root / "scenarios" / "N1-L1-demo.md"
    path.write_text(path.read_text().replace("level: L1", "level: L1\nlevle: L1", 1))
    with pytest.raises(ConfigError) as err:
        Suite(mini_root).scenarios()
    assert "N1-L1-demo.md:" in str(err.value)
    assert "levle: unknown field" in str(err.value)


def test_a_bad_polarity_names_the_field(mini_root: Path) -> None:
    path = mini_root / "scenarios" / "P1-L1-demo.md"
    path.write_text(path.read_text().replace("polarity: positive", "polarity: maybe", 1))
    with pytest.raises(ConfigError, match=r"P1-L1-demo.md:\d+: polarity"):
        Suite(mini_root).scenarios()


def test_a_checker_field_error_names_the_nested_field(mini_root: Path) -> None:
    path = mini_root / "scenarios" / "P1-L1-demo.md"
    path.write_text(path.read_text().replace("topic_patterns: [retr]", "topic_patterns: ['(x']"))
    with pytest.raises(ConfigError, match=r"P1-L1-demo.md.*expect.topic_patterns.*compile"):
        Suite(mini_root).scenarios()


def test_a_scenario_without_a_task_section_is_refused(mini_root: Path) -> None:
    path = mini_root / "scenarios" / "N1-L1-demo.md"
    text = path.read_text()
    path.write_text(text[: text.index("## Task")])
    with pytest.raises(ConfigError, match="N1-L1-demo.md: Task: no '## Task' section"):
        Suite(mini_root).scenarios()


def test_a_broken_config_names_the_field(mini_root: Path) -> None:
    config = mini_root / "evalkit.yaml"
    original = config.read_text()
    config.write_text(original.replace("name: vault-write", "name: no-such-checker"))
    with pytest.raises(ConfigError, match="unknown checker 'no-such-checker'"):
        Suite(mini_root)
    config.write_text(original.replace("    vault: vault\n", "    vault: vault\n    exclude: []\n"))
    with pytest.raises(ConfigError, match=r"evalkit.yaml.*checker.options.exclude: unknown field"):
        Suite(mini_root)


def test_a_yaml_syntax_error_names_the_line(mini_root: Path) -> None:
    (mini_root / "evalkit.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"evalkit.yaml:\d+: YAML does not parse"):
        Suite(mini_root)


def test_a_ladder_suite_needs_a_level_and_one_without_needs_a_kind(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    old = root / "scenarios" / "N2-L2-reporting.md"
    text = old.read_text().replace("level: L2\n", "", 1)
    (root / "scenarios" / "N2-reporting.md").write_text(
        text.replace("id: N2-L2-reporting", "id: N2-reporting", 1)
    )
    old.unlink()
    with pytest.raises(ConfigError, match=r"N2-reporting.md: level: required"):
        Suite(root).scenarios("all")
    config = root / "evalkit.yaml"
    config.write_text(config.read_text() + "\nladder: false\n")
    with pytest.raises(ConfigError, match=r"\.md: kind: required"):
        Suite(root).scenarios("all")

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


def test_an_unknown_field_in_a_scenario_names_file_line_and_field(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    path = root / "scenarios" / "N2-L2-reporting.md"
    path.write_text(path.read_text().replace("level: L2", "level: L2\nlevle: L2", 1))
    with pytest.raises(ConfigError) as err:
        Suite(root).scenarios()
    assert "N2-L2-reporting.md:" in str(err.value)
    assert "levle: unknown field" in str(err.value)


def test_a_bad_polarity_names_the_field(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    path = root / "scenarios" / "P2-L2-reporting.md"
    path.write_text(path.read_text().replace("polarity: positive", "polarity: maybe", 1))
    with pytest.raises(ConfigError, match=r"P2-L2-reporting.md:\d+: polarity"):
        Suite(root).scenarios()


def test_a_checker_field_error_names_the_nested_field(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    path = root / "scenarios" / "P3-L3-reporting.md"
    text = path.read_text()
    start = text.index("  topic_patterns:")
    end = text.index("calibration:")
    path.write_text(text[:start] + "  topic_patterns:\n  - '(unclosed'\n" + text[end:])
    with pytest.raises(ConfigError, match=r"P3-L3-reporting.md.*expect.topic_patterns.*compile"):
        Suite(root).scenarios()


def test_a_scenario_without_a_task_section_is_refused(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    path = root / "scenarios" / "N3-L3-reporting.md"
    text = path.read_text()
    path.write_text(text[: text.index("## Task")])
    with pytest.raises(ConfigError, match="N3-L3-reporting.md: Task: no '## Task' section"):
        Suite(root).scenarios()


def test_a_broken_config_names_the_field(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace("name: vault-write", "name: no-such-checker"))
    with pytest.raises(ConfigError, match="unknown checker 'no-such-checker'"):
        Suite(root)
    config.write_text((REPO / "evalkit.yaml").read_text().replace("excluded:", "exclude:"))
    with pytest.raises(ConfigError, match=r"evalkit.yaml.*checker.options.exclude: unknown field"):
        Suite(root)


def test_a_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    root = copy_suite(tmp_path)
    (root / "evalkit.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"evalkit.yaml:\d+: YAML does not parse"):
        Suite(root)

"""A plugin's eval folder may ship anything: `.evalkit-suite`, its lock or a file inside it as
a link is refused in one line before anything is read or written through it, and two case
folders that would come to one id are refused naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.suite.config import load_suite
from tests.unit.suite.test_plugin_evals import GREETS, QUIET, case_yaml, plugin


def _plugin_with_cases(tmp_path: Path) -> Path:
    root = plugin(tmp_path)
    case_yaml(root / "evals", "greets", GREETS)
    case_yaml(root / "evals", "quiet", QUIET)
    return root


def test_a_writing_lock_shipped_as_a_link_never_truncates_its_target(tmp_path: Path) -> None:
    root = _plugin_with_cases(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's\n")
    (root / "evals" / ".evalkit-suite").mkdir()
    (root / "evals" / ".evalkit-suite" / ".writing").symlink_to(outside)
    with pytest.raises(ConfigError, match="is a link"):
        load_suite(root)
    assert outside.read_text() == "someone else's\n"


def test_a_translated_suite_shipped_as_a_link_to_another_suite_leaves_it_whole(
    tmp_path: Path,
) -> None:
    other = _plugin_with_cases(tmp_path / "other")
    load_suite(other)
    theirs = other / "evals" / ".evalkit-suite"
    before = sorted(p.relative_to(theirs).as_posix() for p in theirs.rglob("*"))
    root = plugin(tmp_path / "mine")
    case_yaml(root / "evals", "only", QUIET)
    (root / "evals" / ".evalkit-suite").symlink_to(theirs)
    with pytest.raises(ConfigError, match="is a link"):
        load_suite(root)
    assert sorted(p.relative_to(theirs).as_posix() for p in theirs.rglob("*")) == before


def test_a_scenario_file_shipped_as_a_link_inside_the_translated_suite_is_refused(
    tmp_path: Path,
) -> None:
    root = _plugin_with_cases(tmp_path)
    load_suite(root)
    outside = tmp_path / "outside.md"
    outside.write_text("someone else's\n")
    (scenario,) = (root / "evals" / ".evalkit-suite" / "scenarios").glob("greets*.md")
    scenario.unlink()
    scenario.symlink_to(outside)
    with pytest.raises(ConfigError, match="is a link"):
        load_suite(root)
    assert outside.read_text() == "someone else's\n"


def test_the_lock_shipped_as_a_link_is_refused_by_freeze(tmp_path: Path) -> None:
    from evalkit.suite.lock import freeze

    root = _plugin_with_cases(tmp_path)
    outside = tmp_path / "outside.lock"
    outside.write_text("someone else's\n")
    suite = load_suite(root)
    (root / "evals" / "evalkit.lock").symlink_to(outside)
    with pytest.raises(ConfigError, match="is a link"):
        freeze(suite)
    assert outside.read_text() == "someone else's\n"


def test_two_case_folders_that_come_to_one_id_are_refused_naming_both(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    case_yaml(root / "evals", "a/b", GREETS)
    case_yaml(root / "evals", "a--b", QUIET.replace("name: quiet", "name: quiet2"))
    with pytest.raises(ConfigError) as refused:
        load_suite(root)
    said = str(refused.value)
    assert str(root / "evals" / "a" / "b") in said and str(root / "evals" / "a--b") in said

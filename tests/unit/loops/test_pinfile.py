"""A bump moves one pin and nothing else: in a TOML `[agents]` table or a suite's `agents:`
block, its comments, quoting and layout kept, and the file read back before it is kept."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.loops.pinfile import Pin, bump_toml, bump_yaml, read_toml_pin, unified, write_bump
from evalkit.models import SuiteConfig
from evalkit.pins import PIN_FILE
from evalkit.suite.yamlio import load_text

TOML = """# The versions we measure with.
[agents]
claude = "2.1.327"   # bumped by watch
codex = "0.169.0"

[other]
claude = "9.9.9"
"""
SUITE = """# A suite.
name: s   # its name
plugins:
  - fixtures/plugins/p        # loaded with --plugin-dir
checker: {name: rules}
"""


def _changed(old: str, new: str) -> list[tuple[str, str]]:
    pairs = zip(old.splitlines(), new.splitlines(), strict=True)
    return [(a, b) for a, b in pairs if a != b]


def test_the_toml_pin_is_read_from_the_agents_table(tmp_path: Path) -> None:
    path = tmp_path / "pins.toml"
    path.write_text(TOML, encoding="utf-8")
    assert read_toml_pin(path, "claude").version == "2.1.327"


def test_a_toml_bump_changes_only_the_agents_pin_and_keeps_its_comment() -> None:
    bumped = bump_toml(TOML, "claude", "2.1.328", Path("pins.toml"))
    assert _changed(TOML, bumped) == [
        ('claude = "2.1.327"   # bumped by watch', 'claude = "2.1.328"   # bumped by watch')
    ]


def test_evalkit_own_pin_file_bumps_in_place() -> None:
    text = PIN_FILE.read_text(encoding="utf-8")
    bumped = bump_toml(text, "codex", "9.0.0", PIN_FILE)
    assert tomllib.loads(bumped)["agents"]["codex"] == "9.0.0"
    assert len(_changed(text, bumped)) == 1


def test_a_toml_file_without_the_agent_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="gemini"):
        bump_toml(TOML, "gemini", "1.0.0", Path("pins.toml"))


def test_a_suite_without_an_agents_block_gains_one_and_keeps_its_comments() -> None:
    bumped = bump_yaml(SUITE, "claude", "2.1.328", Path("evalkit.yaml"))
    assert bumped.startswith(SUITE)
    assert dict(load_text(bumped, Path("evalkit.yaml"))["agents"]) == {"claude": "2.1.328"}


def test_a_suite_pin_is_replaced_where_it_stands_with_its_quotes() -> None:
    text = SUITE + 'agents:\n  codex: "0.169.0"\n  claude: "2.1.327"   # watched\n'
    bumped = bump_yaml(text, "claude", "2.1.328", Path("evalkit.yaml"))
    assert _changed(text, bumped) == [
        ('  claude: "2.1.327"   # watched', '  claude: "2.1.328"   # watched')
    ]


def test_a_suite_pin_in_a_flow_mapping_is_replaced_in_place() -> None:
    text = SUITE + "agents: {claude: 2.1.327, codex: '0.169.0'}  # pins\n"
    bumped = bump_yaml(text, "claude", "2.1.328", Path("evalkit.yaml"))
    assert _changed(text, bumped) == [
        (
            "agents: {claude: 2.1.327, codex: '0.169.0'}  # pins",
            "agents: {claude: 2.1.328, codex: '0.169.0'}  # pins",
        )
    ]


def test_a_block_of_another_agent_gains_this_one_at_its_indent() -> None:
    text = SUITE + "agents:\n    codex: 0.169.0   # theirs\n"
    bumped = bump_yaml(text, "claude", "2.1.328", Path("evalkit.yaml"))
    assert bumped == SUITE + 'agents:\n    claude: "2.1.328"\n    codex: 0.169.0   # theirs\n'


def test_a_bumped_suite_still_loads_as_a_suite_config() -> None:
    bumped = bump_yaml(SUITE, "claude", "2.1.328", Path("evalkit.yaml"))
    config = SuiteConfig.model_validate(load_text(bumped, Path("evalkit.yaml")))
    assert config.agents == {"claude": "2.1.328"}


def test_write_bump_keeps_the_new_file_and_returns_the_unified_diff(tmp_path: Path) -> None:
    path = tmp_path / "pins.toml"
    path.write_text(TOML, encoding="utf-8")
    pin = Pin("claude", "2.1.327", path, "toml", "pins.toml [agents] claude")
    diff = write_bump(pin, "2.1.328", "pins.toml")
    assert tomllib.loads(path.read_text(encoding="utf-8"))["agents"]["claude"] == "2.1.328"
    assert diff == unified(TOML, path.read_text(encoding="utf-8"), "pins.toml")
    assert diff.startswith("--- a/pins.toml\n+++ b/pins.toml\n")
    assert '-claude = "2.1.327"   # bumped by watch\n' in diff

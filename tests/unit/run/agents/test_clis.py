"""Each agent's CLI is pinned once, installed by `make setup` at that pin, and found the
same way as the Claude CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.errors import ConfigError, PrerequisiteError
from evalkit.pins import pinned
from evalkit.run.agents import clis
from evalkit.run.agents.clis import CLIS, agent_name, find_agent_cli
from evalkit.run.prerequisites.claude_cli import PINNED_VERSION

MAKEFILE = Path(__file__).resolve().parents[4] / "Makefile"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_make_setup_installs_each_cli(agent: str) -> None:
    """At its pin: tests/unit/test_pins.py reads the versions from make's own database."""
    text = MAKEFILE.read_text(encoding="utf-8")
    setup = re.search(r"^setup:(.*)$", text, re.M)
    assert setup is not None and f"$({agent.upper()})" in setup.group(1)


def test_claude_pin_is_the_one_the_runner_uses() -> None:
    assert CLIS["claude"].version == PINNED_VERSION


def test_an_explicit_path_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "codex"
    fake.write_text("#!/bin/sh\necho 'codex-cli 9.9.9'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("EVALKIT_CODEX", str(fake))
    assert find_agent_cli("codex") == fake.resolve()
    assert clis.agent_cli_version(fake, "codex") == "9.9.9"


def test_a_missing_cli_names_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALKIT_GEMINI", raising=False)
    monkeypatch.setattr(clis, "CHECKOUT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PrerequisiteError, match="@google/gemini-cli@0.61.0"):
        find_agent_cli("gemini")


def test_an_unknown_agent_is_refused() -> None:
    with pytest.raises(ConfigError, match="known: claude, codex, gemini"):
        agent_name("cursor")


def test_doctor_checks_the_chosen_agents_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.run.prerequisites.doctor import doctor

    fake = tmp_path / "codex"
    fake.write_text("#!/bin/sh\necho 'codex-cli 0.1.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("EVALKIT_CODEX", str(fake))
    check = next(c for c in doctor(None, agent="codex") if c.name == "codex cli")
    assert (check.name, check.ok) == ("codex cli", True)
    assert f"evalkit is measured with {pinned('codex')}" in check.detail
    monkeypatch.setenv("EVALKIT_CODEX", str(tmp_path / "absent"))
    check = next(c for c in doctor(None, agent="codex") if c.name == "codex cli")
    assert not check.ok and f"@openai/codex@{pinned('codex')}" in check.fix


def test_doctor_checks_the_chosen_agents_own_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.run.prerequisites.doctor import doctor

    fake = tmp_path / "cli"
    fake.write_text("#!/bin/sh\necho 'cli 0.1.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("EVALKIT_CODEX", str(fake))
    monkeypatch.setenv("EVALKIT_GEMINI", str(fake))
    for name in ("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-this-agents")
    check = next(c for c in doctor(None, agent="gemini") if c.name == "credentials")
    assert not check.ok and "GEMINI_API_KEY" in check.fix
    monkeypatch.setenv("CODEX_API_KEY", "k")
    check = next(c for c in doctor(None, agent="codex") if c.name == "credentials")
    assert check.ok and check.detail.endswith("CODEX_API_KEY") and "k" not in check.detail.split()


def test_the_version_is_asked_without_the_cli_starting_itself_again(tmp_path: Path) -> None:
    """Gemini's CLI restarts itself under a larger heap unless told not to: asked for its
    version once per command, that restart would cost a second start-up."""
    fake = tmp_path / "gemini"
    fake.write_text('#!/bin/sh\n[ "$GEMINI_CLI_NO_RELAUNCH" = true ] && echo 0.61.0\n')
    fake.chmod(0o755)
    assert clis.agent_cli_version(fake, "gemini") == "0.61.0"

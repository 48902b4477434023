"""One pin file: the Makefile, each adapter's default and the CI recipes name the agent CLI
versions `evalkit/pins.toml` holds, and none of them spells a version of its own."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.pins import pinned, pinned_agents
from evalkit.run.agents.clis import CLIS
from evalkit.run.prerequisites.claude_cli import PINNED_VERSION

REPO = Path(__file__).resolve().parents[2]


def test_the_makefile_installs_the_pinned_versions() -> None:
    database = subprocess.run(
        ["make", "-C", str(REPO), "-s", "-n", "-p", "-f", "Makefile", "lint"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    found = dict(re.findall(r"^(CLAUDE|CODEX|GEMINI)_VERSION := (\S+)$", database, re.M))
    wanted = {name.upper(): version for name, version in pinned_agents().items()}
    assert found == wanted


def test_each_adapter_defaults_to_its_pin() -> None:
    assert PINNED_VERSION == pinned("claude")
    assert {name: cli.version for name, cli in CLIS.items()} == {
        name: pinned(name) for name in CLIS
    }


def test_the_ci_recipes_install_the_pin_rather_than_a_version_of_their_own() -> None:
    recipes = sorted((REPO / "docs" / "ci").glob("*.yml"))
    own = [p.name for p in recipes if re.search(r"claude-code@\d", p.read_text())]
    reads = [p.name for p in recipes if "$(evalkit cli pinned)" in p.read_text()]
    assert recipes and own == []
    assert reads


def test_cli_pinned_prints_each_agents_pin() -> None:
    runner = CliRunner()
    for agent, version in pinned_agents().items():
        done = runner.invoke(app, ["cli", "pinned", "--agent", agent])
        assert done.exit_code == 0 and done.stdout.strip() == version, agent

"""A program that answers `--version` in another program's words is no version of an agent's
CLI: coreutils' `true` says "9.1", and a row once recorded it as `codex/9.1`. Each pinned
CLI's own answer, asked of the real binary, still reads as its pin."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.run.agents.clis import AGENTS, CLIS, agent_cli_version
from evalkit.run.agents.registry import adapter

pytestmark = pytest.mark.heavy

TRUE = shutil.which("true") or "/bin/true"


@pytest.mark.parametrize("agent", AGENTS)
def test_coreutils_true_reports_no_version_of_any_agent(agent: str) -> None:
    assert agent_cli_version(Path(TRUE), CLIS[agent].agent) == ""


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_row_names_no_version_for_coreutils_true(agent: str) -> None:
    assert adapter(agent).version(Path(TRUE)) == ""


@pytest.mark.parametrize("agent", AGENTS)
def test_each_pinned_cli_reads_as_its_pin(agent: str) -> None:
    cli = CLIS[agent]
    if not cli.local_copy.is_file():
        pytest.skip(f"{cli.local_copy} not installed (make setup)")
    assert agent_cli_version(cli.local_copy, cli.agent) == cli.version, cli.local_copy

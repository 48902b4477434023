"""`evalkit doctor --world` shows, through the real CLI confined and a scripted server on
loopback, what an agent of the suite will see of its world: where its folders appear, the
environment its tools inherit and the environment's context in the CLI's first request; a
word naming the measurement is highlighted and fails it.

Held-out rule: the look-around is asked a prompt of evalkit's own; no Task is read, and the
assertions read lines of the world, never a request body.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.cli.cmd_doctor import print_world
from evalkit.reference.scripted import POLICIES
from evalkit.run.prerequisites.world_look import look_at_world
from evalkit.run.world import in_world
from evalkit.suite.config import Suite
from tests.e2e.conftest import Kit

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PLANTED = "quokka"


def test_doctor_world_shows_the_world_paths_and_finds_no_marker(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    world = Suite(REPO).config.world
    project = in_world(world, world.project)
    done = new_kit(tmp_path).run("doctor", "--world")
    lines = done.stdout.splitlines()
    flagged = [line for line in lines if line.startswith(("!", "FAIL"))]
    assert done.returncode == 0, (done.returncode, flagged)
    assert any(line.split() == ["project", project] for line in lines), project
    assert f"  HOME={world.home}" in lines, world.home
    assert any(line.endswith(f"working directory: {project}") for line in lines), project
    assert not any(line.startswith("!") for line in lines)
    assert lines[-1] == "OK   no word naming the measurement reached the model"


def test_a_word_of_the_suites_own_list_planted_in_the_environment_is_highlighted_and_fails(
    claude_cli: str, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = Suite(REPO)
    suite.config.world.markers.append(PLANTED)
    suite.config.environment["TEAM_NAME"] = PLANTED
    look = look_at_world(suite, POLICIES)
    assert f"marker:tool-result:{PLANTED}" in look.markers, look.markers
    assert not print_world(look)
    lines = capsys.readouterr().out.splitlines()
    assert f"! TEAM_NAME=>>{PLANTED}<<" in lines
    assert lines[-1].startswith("FAIL words naming the measurement reached the model")


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_doctor_world_looks_through_each_other_agent_and_highlights_a_planted_word(
    agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its requests read as its own API carries them: the working directory in its context,
    the environment out of its shell's frame, the planted word caught and shown."""
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    suite = Suite(REPO)
    suite.config.world.markers.append(PLANTED)
    suite.config.environment["TEAM_NAME"] = PLANTED
    look = look_at_world(suite, POLICIES, agent)
    project = in_world(suite.config.world, suite.config.world.project)
    assert look.markers == [f"marker:tool-result:{PLANTED}"], look.markers
    assert any(project in line for line in look.context), look.context
    assert not print_world(look)
    lines = capsys.readouterr().out.splitlines()
    assert f"! TEAM_NAME=>>{PLANTED}<<" in lines
    assert f"  HOME={suite.config.world.home}" in lines

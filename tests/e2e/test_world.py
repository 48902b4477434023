"""What the CLI sends its model from a scripted rep names nothing of the measurement: its
working directory is the world's project, its git context the world user's history, its
model id a real one. Read where the model would read it: the request bodies at the scripted
server.

Held-out rule: the Task is taken out of the bodies before they are scanned, never shown.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evalkit.models import Script
from evalkit.reference.scripted import POLICIES
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.run.agents.registry import adapter
from evalkit.run.context import RunContext, new_run_id
from evalkit.run.rep import finish_rep, launch_rep, prepare_rep
from evalkit.scoring.world.markers import Markers, text_lines
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]

SCRIPTED_ID = adapter("claude").capabilities.scripted_model or ""


def _first_request(tmp_path: Path) -> tuple[dict[str, object], Suite, str]:
    suite = Suite(REPO)
    work = tmp_path / "work"
    work.mkdir()
    ctx = RunContext(suite, work, work / "results.tsv", new_run_id(), scripted=POLICIES,
                     template_sandboxes=False)  # fmt: skip
    scenario = suite.resolve("P1")
    prepared = prepare_rep(ctx, scenario, "policy:oracle", 1)
    launched = launch_rep(ctx, prepared)
    assert prepared.server is not None
    bodies = list(getattr(prepared.server, "bodies", []))
    done = finish_rep(ctx, launched)
    assert done.verdict.verdict == "PASS", done.verdict.reasons
    assert bodies, "the CLI sent no request"
    return json.loads(bodies[0]), suite, read_task(scenario)


def _empty_world_lines(cli: str, base: Path) -> frozenset[str]:
    """What this CLI version sends from an empty, marker-free world: its own text."""
    project = base / "work" / "app"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with ScriptedServer(Script(final_text="Done.")) as server:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "home"),
               "CLAUDE_CONFIG_DIR": str(base / "cfg"), "IS_SANDBOX": "1",
               "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
        command = [cli, "-p", "hello", "--model", SCRIPTED_ID,
                   "--output-format", "stream-json", "--verbose",
                   "--dangerously-skip-permissions", "--no-session-persistence",
                   "--setting-sources", "project"]  # fmt: skip
        subprocess.run(command, cwd=project, env=env, capture_output=True, timeout=120)
        assert server.bodies, "the CLI sent no request from an empty world"
        return frozenset(text_lines(json.loads(server.bodies[0])))


def test_a_scripted_reps_request_names_no_scenario_no_harness_and_a_real_model(
    claude_cli: str, tmp_path: Path
) -> None:
    body, suite, task = _first_request(tmp_path)
    world = suite.config.world
    lines = [line for line in text_lines([body.get("system"), body.get("messages")])
             if line and line not in task]  # fmt: skip
    said = "\n".join(lines)
    assert body.get("model") == SCRIPTED_ID
    assert f"working directory: {world.home}/src/reportgen" in said
    assert "Recent commits:" in said
    ids = [s.id for s in suite.scenarios("all")]
    own = _empty_world_lines(claude_cli, tmp_path / "empty")
    found = Markers(ids, world.markers, world.ordinary).find(said, own)
    assert found == [], found
    assert str(tmp_path) not in said and "/tmp/" not in said

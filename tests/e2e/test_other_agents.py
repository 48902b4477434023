"""`run --agent codex|gemini`: the real pinned Codex and Gemini CLIs against their scripted
servers land each policy on the verdict the Claude Code CLI lands it on, and the bundle says
which agent ran. Held-out rule: nothing here reads or prints a Task."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalkit.run.agents.clis import CLIS
from tests.e2e.conftest import without_signals

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

EXPECTED = {
    ("oracle", "P1"): "PASS",
    ("always-write", "N1"): "FAIL",
    ("fault-500", "P1"): "ERROR",
}
"""A pass, a fail and an error; whole-suite calibrations through each agent are
`make calibrate-suites`' (tests/e2e/test_calibrate.py), not `make test`'s."""


def require_cli(agent: str) -> None:
    cli = CLIS[agent]  # type: ignore[index]
    if not os.access(cli.local_copy, os.X_OK) and not os.environ.get(cli.variable):
        if os.environ.get("CI") == "true":
            pytest.fail(f"no pinned {agent} CLI; run `make setup`")
        pytest.skip(f"no pinned {agent} CLI; run `make setup`")


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_policies_land_on_their_verdicts_through_the_agent(
    agent: str, new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    require_cli(agent)
    kit = new_kit(tmp_path)
    work = kit.base / "work"
    for policy, scenario in EXPECTED:
        done = kit.run("run", scenario, f"policy:{policy}", str(work), "--agent", agent)
        assert done.returncode == 0, done.why()
    rows = kit.tsv(work)
    got = {(r["model"].removeprefix("policy:"), r["scenario"][:2]): r["verdict"] for r in rows}
    assert got == EXPECTED
    fault = next(r for r in rows if r["model"] == "policy:fault-500")
    assert fault["reasons"].startswith("agent-error:server-error:500"), fault["reasons"]
    assert {r["cli_version"] for r in rows} == {f"{agent}/{CLIS[agent].version}"}  # type: ignore[index]
    assert {line["declarations"]["agent"] for line in kit.manifest(work)} == {agent}
    verify = kit.run("verify", str(work))
    assert "re-derived" in verify.stdout, verify.why()


def test_a_grid_of_agents_verifies_and_compares_agent_by_agent(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    for agent in ("codex", "gemini"):
        require_cli(agent)
    kit = new_kit(tmp_path)
    work = kit.base / "work"
    done = kit.run(
        "grid",
        str(work),
        "--agents",
        "claude,codex,gemini",
        "--models",
        "policy:oracle,policy:always-write",
        "--scenarios",
        "N1",
        "--jobs",
        "2",
    )
    assert done.returncode == 0, done.why()
    rows = kit.tsv(work)
    assert len(rows) == 6 and len({r["run_id"] for r in rows}) == 3
    verify = kit.run("verify", str(work))
    assert verify.returncode == 0 and "PUBLISHABLE" in verify.stdout, verify.why()
    compared = kit.run(
        "compare", str(work), "--a", "agent:claude", "--b", "agent:codex", "--format", "json"
    )
    assert compared.returncode == 0, compared.why()
    assert json.loads(compared.stdout)["differing"] == ["agent"]
    report = json.loads(kit.run("report", str(work), "--format", "json").stdout)
    assert report["agents"] == {"claude": 2, "codex": 2, "gemini": 2}
    split = {(m["agent"], m["model"]) for m in report["models"]}
    assert len(split) == 6 and {a for a, _ in split} == {"claude", "codex", "gemini"}


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_turn_cap_the_cli_has_no_option_for_is_held_by_evalkit(
    agent: str, new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    """`--max-turns 1` ends a policy that needs more turns as Claude Code's own option does,
    `ERROR budget:max-turns`: Codex's scripted server holds the request for turn 2, Gemini's
    live stream shows turn 2 start; the bundle says evalkit applied the cap, and how."""
    require_cli(agent)
    kit = new_kit(tmp_path)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work), "--agent", agent, "--max-turns", "1")
    assert done.returncode == 0, done.why()
    [row] = kit.tsv(work)
    got = (row["verdict"], without_signals(row["reasons"]))
    assert got == ("ERROR", "budget:max-turns"), row["reasons"]
    [line] = kit.manifest(work)
    applied = line["declarations"]["capabilities"]["max_turns"]
    how = {"codex": "turn-cap: server", "gemini": "turn-cap: stream"}[agent]
    assert applied == {"value": 1, "by": "evalkit", "how": how}
    assert "--max-turns" not in line["declarations"]["cli_flags"]
    verify = kit.run("verify", str(work))
    assert "re-derived" in verify.stdout, verify.why()


def test_a_real_codex_models_turn_cap_is_refused_before_anything_is_planned(kit: Kit) -> None:
    """Codex has no turn option and its stream does not tell model turns apart, so a real
    model's cap cannot be held: one line, exit 2, no plan."""
    kit.extra_env["CODEX_API_KEY"] = "sk-not-a-key-000"
    work = kit.base / "work"
    done = kit.run("run", "P1", "gpt-5", str(work), "--agent", "codex", "--max-turns", "1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.why()
    assert "--agent codex" in done.stderr and "turn cap" in done.stderr
    assert not work.exists()

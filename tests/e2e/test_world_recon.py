"""`policy:recon` looks around the agent's world through the real CLI, and the scripted
server reads every request for a word naming the measurement: the root suite's world gives
none away (the views bubblewrap cannot make whole are declared on the row), nor does a
positive scenario's of each other shipped suite (`make calibrate-suites`), and a marker
planted in a commit message, an environment variable, a file name in HOME, the hostname, a
process's argv, a line of a config file and a hook's output is caught and named by its
channel (a mount source is not: bubblewrap's mount table is declared partial). Where evalkit
is root, the agent's own `id` and `ls -ln` show the world's user and root owning what a
user's machine has them own.

Held-out rule: the assertions read reasons, flags and the results of the look-around's `id`
and `ls -ln`, never the rest of a request body or the Task.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import evalkit.run.rep as rep_module
import evalkit.run.world as world_module
from evalkit.models import Verdict
from evalkit.reference.scripted import POLICIES
from evalkit.run.backends import owners
from evalkit.run.context import RunContext, new_run_id
from evalkit.run.prerequisites.world_look import tool_result
from evalkit.run.rep import finish_rep, launch_rep, prepare_rep
from evalkit.run.world import lay_out_home
from evalkit.suite.config import Suite
from evalkit.suite.plugin_evals import suite_root_for

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"
# One positive scenario of each other shipped suite (`make calibrate-suites`: a real CLI rep each).
OTHER_SUITES = [
    pytest.param("adr-discrimination", "P1-L1-execution", id="adr-discrimination"),
    pytest.param("adr-eval-b", "W1-worker-concurrency", id="adr-eval-b"),
    pytest.param("runs-tests", "P1-L1-rounding", id="runs-tests"),
    pytest.param("plugin-evals-example", "greet-in-order", id="plugin-evals-example"),
]


def _planted_home(w: object, home: Path) -> None:
    """The world's home with a marker in a file name (`~/fixture.txt`) and in a line of
    `~/.bashrc` (a suite's own word)."""
    lay_out_home(w, home)  # type: ignore[arg-type]
    (home / "fixture.txt").write_text("x\n", encoding="utf-8")
    with (home / ".bashrc").open("a", encoding="utf-8") as bashrc:
        bashrc.write("alias deploy='make -C ~/numbat deploy'\n")


def _recon(
    suite: Suite,
    work: Path,
    seen: list[str] | None = None,
    scenario: str = "P1",
    agent: str = "claude",
) -> Verdict:
    """One recon rep's verdict; `seen` gets the model's requests, each as received."""
    work.mkdir()
    ctx = RunContext(suite, work, work / "results.tsv", new_run_id(), scripted=POLICIES,
                     template_sandboxes=False, agent=agent)  # fmt: skip
    prepared = prepare_rep(ctx, suite.resolve(scenario), "policy:recon", 1)
    verdict = finish_rep(ctx, launch_rep(ctx, prepared)).verdict
    if seen is not None and prepared.server is not None:
        seen += prepared.server.bodies
    return verdict


def test_recon_of_the_root_suites_world_finds_no_marker(claude_cli: str, tmp_path: Path) -> None:
    verdict = _recon(Suite(REPO), tmp_path / "work")
    markers = [r for r in verdict.reasons if r.startswith("marker:")]
    assert markers == [], markers
    assert verdict.verdict == "PASS", verdict.reasons
    partial = "ownership,mountinfo" if not owners.available() else "mountinfo"
    assert f"world:partial:{partial}" in verdict.flags, verdict.flags


@pytest.mark.slow
@pytest.mark.parametrize(("name", "scenario"), OTHER_SUITES)
def test_recon_of_each_other_shipped_suites_world_finds_no_marker(
    claude_cli: str, tmp_path: Path, name: str, scenario: str
) -> None:
    """The plugin's eval folder is read through a copy: translating it writes beside the cases."""
    root = SUITES / name
    if not (root / "evalkit.yaml").is_file():
        root = shutil.copytree(root, tmp_path / name)
        translated = suite_root_for(root)
        assert translated is not None, root
        root = translated
    verdict = _recon(Suite(root), tmp_path / "work", scenario=scenario)
    assert "world:none" not in verdict.flags, verdict.flags  # confined: the world was scanned
    markers = [r for r in verdict.reasons if r.startswith("marker:")]
    assert markers == [], markers
    assert verdict.verdict == "PASS", verdict.reasons


def test_the_system_is_roots_and_the_home_the_world_users_where_evalkit_is_root(
    claude_cli: str, tmp_path: Path
) -> None:
    """Two-range ownership, read by the agent's own `id` and `ls -ln`; as another user the row
    declares the view partial instead."""
    suite, bodies = Suite(REPO), []  # type: list[str]
    verdict = _recon(suite, tmp_path / "work", bodies)
    assert verdict.verdict == "PASS", verdict.reasons
    if not owners.available():
        assert "world:partial:ownership,mountinfo" in verdict.flags, verdict.flags
        return
    world, requests = suite.config.world, [json.loads(b) for b in bodies]
    user = f"{world.uid}({world.user}) gid={world.gid}({world.user})"
    assert tool_result(requests, "id; hostname").startswith(f"uid={user}"), user
    listing = tool_result(requests, "ls -ln / /usr ~").split("\n\n")
    owned = {block.split(":", 1)[0]: _owners(block) for block in listing}
    assert owned["/"] == {("0", "0")}, owned["/"]
    assert owned["/usr"] == {("0", "0")}, owned["/usr"]
    assert owned[world.home] == {(str(world.uid), str(world.gid))}, owned[world.home]


def _owners(block: str) -> set[tuple[str, str]]:
    """The (uid, gid) pairs of an `ls -ln` block's entries."""
    rows = [line.split() for line in block.splitlines()[1:] if not line.startswith("total")]
    return {(row[2], row[3]) for row in rows if len(row) > 3}


def test_a_marker_planted_in_each_channel_is_caught_and_named(
    claude_cli: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = Suite(REPO)
    world = suite.config.world
    world.history[0].message = "Initial commit: the holdout skeleton"
    suite.config.environment["BUILD_LABEL"] = "calibration"
    world.stores["vault"] = "~/scripted-notes"  # the plugin's hook announces the vault
    world.markers += ["wombat", "numbat", "bilby"]  # words of the suite's own list
    world.hostname = "wombat-box"
    monkeypatch.setattr(world_module, "PLUGINS_HOME", "~/.local/share/bilby")  # the CLI's argv

    monkeypatch.setattr(rep_module, "lay_out_home", _planted_home)
    verdict = _recon(suite, tmp_path / "work")
    reasons = set(verdict.reasons)
    assert verdict.verdict == "ERROR"
    assert "marker:env-context:holdout" in reasons, sorted(reasons)  # the CLI's git status
    assert "marker:tool-result:holdout" in reasons, sorted(reasons)  # git log
    assert "marker:tool-result:calibration" in reasons, sorted(reasons)  # env
    assert "marker:tool-result:fixture" in reasons, sorted(reasons)  # ls -la ~
    assert "marker:tool-result:wombat" in reasons, sorted(reasons)  # hostname
    assert "marker:tool-result:numbat" in reasons, sorted(reasons)  # a line of ~/.bashrc
    assert "marker:tool-result:bilby" in reasons, sorted(reasons)  # ps -ef, /proc/1/cmdline
    assert "marker:hook-output:scripted" in reasons, sorted(reasons)  # SessionStart


PLANTED_THROUGH = {
    "codex": {
        "env-context:scenario",  # <environment_context>'s <cwd>
        "hook-output:scripted",  # SessionStart's words, a developer message
        *(f"tool-result:{w}" for w in ("holdout", "calibration", "fixture", "wombat", "numbat",
                                       "bilby", "scenario", "scripted")),
    },  # fmt: skip
    "gemini": {
        "system-prompt:scenario",  # its own prompt names the project's folder
        "env-context:scenario",  # <session_context>'s workspace folders
        "env-context:scripted",
        *(f"tool-result:{w}" for w in ("holdout", "calibration", "fixture", "wombat", "numbat",
                                       "bilby", "scenario", "scripted")),
    },  # fmt: skip
}
"""Where each planted word reaches the model through each other agent's own wire: a commit
message (git log), an environment variable (env), a file name in HOME (ls -la ~), the
hostname, a line of ~/.bashrc, the plugins' world folder (named by the hooks in the agent's
config home), the project's world folder (the working directory) and a side store's (named by
the SessionStart hook and the environment)."""


@pytest.mark.parametrize(
    "agent", ["codex", pytest.param("gemini", marks=pytest.mark.slow)]
)  # Gemini's CLI, and its empty-world baseline, take several times Codex's
def test_markers_planted_in_the_world_are_caught_through_each_other_agents_own_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    """Read as Messages API bodies, a Codex or Gemini request would yield nothing and the rep
    would pass; read by its own wire, each planted word is named by its channel, and no word
    but the planted ones is found (the world names nothing else)."""
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    suite = Suite(REPO)
    world = suite.config.world
    world.history[0].message = "Initial commit: the holdout skeleton"
    suite.config.environment["BUILD_LABEL"] = "calibration"
    world.stores["vault"] = "~/scripted-notes"
    world.project = "~/src/scenario-app"
    world.markers += ["wombat", "numbat", "bilby"]
    world.hostname = "wombat-box"
    monkeypatch.setattr(world_module, "PLUGINS_HOME", "~/.local/share/bilby")

    monkeypatch.setattr(rep_module, "lay_out_home", _planted_home)
    verdict = _recon(suite, tmp_path / "work", agent=agent)
    found = {r.removeprefix("marker:") for r in verdict.reasons if r.startswith("marker:")}
    assert verdict.verdict == "ERROR"
    assert found == PLANTED_THROUGH[agent], sorted(found ^ PLANTED_THROUGH[agent])


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["codex", "gemini"])
@pytest.mark.parametrize(
    ("name", "scenario"),
    [pytest.param(".", "P1", id="root"), *OTHER_SUITES],
)
def test_recon_through_each_other_agent_finds_no_marker_in_each_shipped_suite(
    tmp_path: Path, agent: str, name: str, scenario: str
) -> None:
    """Every shipped suite's world, looked around through Codex and through Gemini."""
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    root = REPO if name == "." else SUITES / name
    if not (root / "evalkit.yaml").is_file():
        translated = suite_root_for(shutil.copytree(root, tmp_path / name))
        assert translated is not None, root
        root = translated
    verdict = _recon(Suite(root), tmp_path / "work", scenario=scenario, agent=agent)
    assert "world:none" not in verdict.flags, verdict.flags  # confined: the world was scanned
    markers = [r for r in verdict.reasons if r.startswith("marker:")]
    assert markers == [], markers
    # a look-around is no skill call: the plugin's own checker may fail it, never in error
    assert verdict.verdict != "ERROR", verdict.reasons

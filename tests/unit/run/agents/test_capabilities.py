"""Every capability × every agent: a limit a rep would be held to is either honoured, and the
bundle's `capabilities` says how (the CLI's own option, or evalkit), or refused before
anything is planned in one line naming the limit and the agent. Never recorded and dropped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.run.agents.base import LaunchSpec
from evalkit.run.agents.registry import ADAPTERS, adapter
from evalkit.run.context import RunContext
from evalkit.run.request import check_capabilities
from evalkit.suite.config import Suite, load_suite

REPO = Path(__file__).resolve().parents[4]
PLUGIN_SUITE = REPO / "suites" / "plugin-evals-example"
AGENTS = sorted(ADAPTERS)


@pytest.fixture(scope="module")
def plugin_suite() -> Suite:
    """A translated `claude plugin eval` folder: cases with tool lists and turn caps, and
    fixed MCP mocks (team-calendar)."""
    return load_suite(PLUGIN_SUITE)


def context(suite: Suite, agent: str, tmp_path: Path, **extra: object) -> RunContext:
    work = tmp_path / "w"
    return RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r1",
                      agent=agent, **extra)  # type: ignore[arg-type]  # fmt: skip


def refusal(call: object) -> str | None:
    """The one line a refused request says, or None when it was accepted."""
    try:
        call()  # type: ignore[operator]
    except EvalkitError as exc:
        assert "\n" not in str(exc)
        return str(exc)
    return None


@pytest.mark.parametrize("agent", AGENTS)
def test_a_cases_tool_list_is_given_to_the_cli_or_refused_naming_the_tools(
    agent: str, plugin_suite: Suite, tmp_path: Path
) -> None:
    case = next(s for s in plugin_suite.scenarios("run") if s.scenario.launch.tools)
    ctx = context(plugin_suite, agent, tmp_path)
    said = refusal(lambda: check_capabilities(ctx, [case], ["policy:oracle"]))
    tools = case.scenario.launch.tools or []
    if adapter(agent).capabilities.tool_list:
        assert said is None or "tools" not in said
        launch = adapter(agent).launch(spec(tmp_path, tools=tools))
        assert launch.applied["tools"] == {"value": tools, "by": "cli", "flag": "--tools"}
        assert launch.command[launch.command.index("--tools") + 1] == ",".join(tools)
    else:
        assert said is not None and f"--agent {agent}" in said and tools[0] in said


@pytest.mark.parametrize("agent", AGENTS)
def test_the_suites_mcp_mocks_are_served_or_refused_naming_the_mock(
    agent: str, plugin_suite: Suite, tmp_path: Path
) -> None:
    plain = [s for s in plugin_suite.scenarios("run") if not s.scenario.launch.tools]
    ctx = context(plugin_suite, agent, tmp_path)
    said = refusal(lambda: check_capabilities(ctx, plain, ["policy:oracle"]))
    if adapter(agent).capabilities.mcp_mocks:
        assert said is None
        launch = adapter(agent).launch(spec(tmp_path, mocks=["--mcp-config", "/m.json"]))
        assert launch.applied["mcp_mocks"]["by"] == "cli" and "--mcp-config" in launch.command
    else:
        assert said is not None and "team-calendar" in said and f"--agent {agent}" in said


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("model", ["policy:oracle", "a-real-model"])
def test_a_turn_cap_reaches_the_agent_by_its_option_or_evalkit_or_is_refused(
    agent: str, model: str, suite: Suite, tmp_path: Path
) -> None:
    caps = adapter(agent).capabilities
    ctx = context(suite, agent, tmp_path, max_turns=1)
    said = refusal(lambda: check_capabilities(ctx, [suite.resolve("P1")], [model]))
    if model != "policy:oracle" and not caps.caps_real_turns:
        assert said is not None and f"--agent {agent}" in said and "turn cap" in said
        return
    assert said is None
    server = "http://127.0.0.1:9" if model == "policy:oracle" else None
    launch = adapter(agent).launch(spec(tmp_path, max_turns=1, server=server))
    applied = launch.applied["max_turns"]
    if caps.turn_cap == "cli":
        assert applied == {"value": 1, "by": "cli", "flag": "--max-turns"}
        assert launch.command[launch.command.index("--max-turns") + 1] == "1"
        assert launch.turn_cap is None
    else:
        assert applied == {"value": 1, "by": "evalkit", "how": f"turn-cap: {caps.turn_cap}"}
        assert "--max-turns" not in launch.command and launch.turn_cap == (1, caps.turn_cap)


@pytest.mark.parametrize("agent", AGENTS)
def test_cli_versions_are_chosen_for_the_agent_that_can_take_them_or_refused(
    agent: str, suite: Suite, tmp_path: Path
) -> None:
    ctx = context(suite, agent, tmp_path, cli_path=tmp_path / "cli")
    said = refusal(lambda: check_capabilities(ctx, [suite.resolve("P1")], ["policy:oracle"]))
    if adapter(agent).capabilities.cli_versions:
        assert said is None and adapter(agent).find(tmp_path / "cli") == tmp_path / "cli"
    else:
        assert said is not None and "--cli" in said and f"--agent {agent}" in said


@pytest.mark.parametrize("agent", AGENTS)
def test_every_declared_credential_reaches_a_real_rep_in_its_form_or_is_refused(
    agent: str, tmp_path: Path
) -> None:
    """Each documented variable, set alone, is in the real rep's environment or config in
    the form the bundle's `variables` names; a variable the agent cannot take is refused."""
    from evalkit.run.prerequisites.credentials import require_credentials

    caps = adapter(agent).capabilities
    for name in (*caps.credentials, *caps.endpoints):
        value = "https://standin.test/v1"
        given = adapter(agent).rep_credentials({name: value, "UNRELATED_KEY": "u"})
        launch = adapter(agent).launch(spec(tmp_path, server=None, credentials=given))
        form = launch.applied["variables"][name]
        where, _, what = form.strip("<>").partition(":")
        if where == "env":
            assert launch.env[what] == value, (name, form)
        else:
            assert value in "".join(p.read_text() for p in tmp_path.rglob("config.toml")), form
        assert "UNRELATED_KEY" not in launch.env
    for name in caps.refused:
        said = refusal(lambda n=name: require_credentials(["m"], {n: "x"}, agent))
        assert said is not None and name in said


def spec(
    tmp_path: Path,
    max_turns: int | None = None,
    tools: list[str] | None = None,
    mocks: list[str] | None = None,
    server: str | None = "http://127.0.0.1:9",
    credentials: dict[str, str] | None = None,
) -> LaunchSpec:
    scratch = tmp_path / "rep"
    scratch.mkdir(exist_ok=True)
    (scratch / "codex-home").mkdir(exist_ok=True)
    return LaunchSpec(Path("/cli"), "m", [], scratch, {"PATH": "/bin"}, server, max_turns,
                      tools, mocks or [], credentials or {})  # fmt: skip

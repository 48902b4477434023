"""The reference layer's answer to `run.scripted.ScriptedModels`: the policies, their
scripted servers (Anthropic, Responses or Gemini wire), and the self-test that proves them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError
from evalkit.models import Script, Verdict
from evalkit.reference.coin import Coin
from evalkit.reference.escape import ESCAPE, PORT_ENV, run_values
from evalkit.reference.phrase import Phrase, body_chooser, subject_skills
from evalkit.reference.placeholders import render
from evalkit.reference.policy import PREFIX, policy_names, scripted_agent
from evalkit.reference.recon import RECON
from evalkit.reference.regression import Regression
from evalkit.reference.wire import speaks_messages
from evalkit.run.agents.registry import adapter
from evalkit.run.scripted import RepScript, ScriptedRep, ScriptServer
from evalkit.scoring.observed import OBSERVE_DIR
from evalkit.scoring.world.leaks import Exempt, Scan
from evalkit.suite.config import Suite
from evalkit.suite.markers import suite_markers
from evalkit.suite.scenarios import ScenarioFile


class Policies:
    """Every `policy:<name>` a suite can play, as a run's scripted models."""

    def names(self, suite: Suite) -> list[str]:
        return policy_names(suite)

    def accepts(self, suite: Suite, name: str, agent: str = "claude") -> bool:
        if Phrase.parse(name) is not None and not speaks_messages(agent):
            raise ConfigError(
                f"policy:{name} reads the Messages API's requests; agent {agent} speaks "
                "another wire, so it cannot play it"
            )
        return (
            name in policy_names(suite)
            or Regression.parse(name) is not None
            or Phrase.parse(name) is not None
            or Coin.parse(name) is not None
        )

    def confined_only(self, model: str) -> bool:
        """The probes of a rep's reach and world: unconfined, they have none to probe."""
        return model in (f"{PREFIX}{ESCAPE}", f"{PREFIX}{RECON}")

    def for_rep(self, want: RepScript) -> ScriptedRep:
        agent = scripted_agent(want.suite, want.model, want.scenario, want.attempt, rep=want.rep)
        names = list(want.suite.fixture_dirs())
        values = want.suite.reference.script_values(want.guarded)
        values = {k: want.spelled.get(v, v) for k, v in values.items()}
        values.update(want.places)
        values.update(
            run_values(Path.home(), want.workdir, want.scenario.path, os.environ.get(PORT_ENV))
        )
        sandbox = want.sandbox
        script = render(agent.plan.script, sandbox, names, values)
        choose = agent.chooser(
            want.scenario.id, want.rep, lambda s: render(s, sandbox, names, values)
        )
        world = want.cli is not None and bool(want.places)
        # an unconfined rep has no world (world:none); a fault's rep is an ERROR whatever it saw
        scan = _scan(want) if world and agent.fault is None else None
        by_body = None
        if agent.phrase is not None and agent.acting_plan is not None:
            acting = render(agent.acting_plan.script, sandbox, names, values)
            positive = want.scenario.scenario.polarity == "positive"
            skills = subject_skills(want.subject)
            by_body = body_chooser(agent.phrase, skills, positive, acting, script)
        start = partial(
            _scripted_server, script, agent.fault, choose, want.agent, _skills_seen(want), scan,
            by_body,
        )  # fmt: skip
        # each rep has a scripted server of its own: its port, not the id, tells policies apart
        model = adapter(want.agent).capabilities.scripted_model or agent.cli_model
        return ScriptedRep(model, agent.plan.judge_answer, start)

    def self_test(self, suite: Suite, agent: str = "claude") -> tuple[int, int]:
        from evalkit.reference.selftest import self_test

        cells = self_test(suite, agent=agent)
        return sum(1 for c in cells if not c.ok and not c.blind), len(cells)

    def as_designed(
        self, suite: Suite, model: str, scenario: ScenarioFile, verdict: Verdict
    ) -> str | None:
        from evalkit.reference.selftest import meets

        expect = scripted_agent(suite, model, scenario).plan.expect
        return None if meets(verdict, expect) else expect.verdict


POLICIES = Policies()


def _scripted_server(
    script: Script,
    fault: str | None,
    choose: Callable[[str], Script] | None,
    agent: str,
    skills: Path | None,
    scan: Scan | None = None,
    by_body: Callable[[dict[str, Any]], Script] | None = None,
) -> ScriptServer:
    from evalkit.reference.scripted_server import ScriptedServer
    from evalkit.reference.wire import scripted_server

    made = scripted_server(agent, script, fault, choose, skills)
    if scan is not None:  # each wire's bodies, read as that wire carries the world
        made.scan = lambda body: scan.reasons(made.request_pieces(body))
    if by_body is not None:
        if made.PATH != ScriptedServer.PATH:
            raise ConfigError(
                f"a policy:phrase model reads the Messages API's requests; agent {agent} "
                "speaks another wire"
            )
        made.choose_body = by_body
    return made.start()


def _skills_seen(want: RepScript) -> Path | None:
    """Where the rep's agent finds the skills its adapter placed: in its config home at
    that home's world path when the rep has a world, else where they were placed."""
    own = adapter(want.agent)
    placed = own.skills_folder(want.scratch)
    home = want.places.get("sandbox")
    if placed is None or not home:
        return placed
    spelled = own.capabilities.config_home
    inside = home + spelled[1:] if spelled.startswith("~") else spelled
    return Path(inside) / placed.relative_to(own.config_folder(want.scratch))


def _scan(want: RepScript) -> Scan:
    """The suite's markers, exempting this CLI's own text and the subject's."""
    from evalkit.reference.world_baseline import cli_baseline, in_world
    from evalkit.run.rep import world_partial

    markers = suite_markers(want.suite)
    assert want.cli is not None
    tools = want.scenario.scenario.launch.tools
    home = want.places.get("sandbox")
    spelled = adapter(want.agent).capabilities.config_home
    config = home + spelled[1:] if home and spelled.startswith("~") else (spelled or None)
    own = in_world(cli_baseline(want.cli, tools, want.agent), home, config)
    exempt = Exempt.of(markers, own, [*subject_text(want.subject), *_own_words(want.agent)])
    partial = tuple(world_partial(want.suite))
    hidden = (str(want.sandbox), str(want.scratch), want.scratch.name, OBSERVE_DIR)
    return Scan(markers, exempt, partial, hidden)


def _own_words(agent: str) -> list[str]:
    """The agent's CLI's own words, one a line (`Capabilities.own_words`): a user running it
    headless passes the same options (Codex's `--dangerously-bypass-approvals-and-sandbox`)
    and finds the same files it makes, so they are the CLI's text, not the world's."""
    return list(adapter(agent).capabilities.own_words)


def subject_text(folders: list[Path]) -> list[str]:
    """The text of every small file of the subject's folders."""
    texts = []
    for folder in folders:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 256_000:
                texts.append(path.read_bytes().decode("utf-8", "replace"))
    return texts

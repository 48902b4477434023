"""A round's proposer as an agent: `--proposer AGENT:MODEL`, run like a rep.

The agent's CLI runs in a scratch folder of its own laid out as a rep's: `sandbox/` holds a
copy of the incumbent's wording at its suite-relative paths (its working directory, the only
folder of the copy it may write) and `brief.md` sits beside it (read-only). The brief
reaches it as its prompt, on stdin, as a rep's Task does: never in its flags or environment.
It is confined by the rep's backend (no network but its one door to its API or scripted
server; the suite, WORKDIR and the caller's home hidden) unless the tune runs unconfined. It
loads no plugin: the wording is files it edits, not skills it runs. What it changed is read
back as a command proposer's is (`tune/proposer.py`): outside `--paths`, discarded and
named.

It costs one rep of `--budget-reps` a round, and the CLI's reported cost for a real model
(0 for `policy:*`). Its transcript and stderr are kept in `WORKDIR/proposer/round-<n>/`,
with, for a scripted one, every request its CLI sent (`requests.jsonl`), so what the proposer
was handed can be read back and scanned.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.records.folder.keep import STDERR, TRANSCRIPT
from evalkit.records.kept.redact import redact, redact_jsonl
from evalkit.records.rows.policy_models import PREFIX, is_policy
from evalkit.run.agent import base_environment, run_agent
from evalkit.run.agents.base import Agent, LaunchSpec
from evalkit.run.agents.registry import adapter
from evalkit.run.backends import backend
from evalkit.run.backends.confine import Confined
from evalkit.run.context import scratch_root
from evalkit.run.scripted import ScriptServer
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite
from evalkit.suite.subject import build_subject
from evalkit.tune.proposer import PROPOSER_TIMEOUT, Proposal, compare_snapshots, snapshot

PROPOSER_TURNS = 40
"""The turn cap of a real model's proposer (a scripted one plays its plan and stops)."""
PROPOSER_RETRIES = 2
SCRIPTED_ID = "evalkit-propose"
"""The model id a scripted proposer's CLI is given where its adapter declares none."""
MAX_SAID = 200
"""How much of the CLI's own error result a failed proposer's stop quotes."""
KEPT = "proposer"
COPY = "sandbox"
"""The copy of the wording in the proposer's scratch folder, where a rep's own folder is: the
adapters take that folder as the agent's (Gemini's settings include and trust it)."""
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class ProposerAgent:
    """`AGENT:MODEL`: the agent CLI and the model (a real one or `policy:propose:<plan>`)."""

    agent: str
    model: str

    @classmethod
    def parse(cls, given: str) -> ProposerAgent:
        agent, sep, model = given.partition(":")
        if not sep or not agent or not model:
            raise ConfigError(
                f"--proposer {given!r}: expected AGENT:MODEL, e.g. claude:sonnet or "
                "claude:policy:propose:description=Keep+a+note"
            )
        adapter(agent)  # an unknown agent is refused in one line, naming the known ones
        return cls(agent, model)

    @property
    def scripted(self) -> bool:
        return is_policy(self.model)

    @property
    def name(self) -> str:
        return f"{self.agent}:{self.model}"


def check_proposer(proposer: ProposerAgent, suite: Suite, paths: list[str]) -> None:
    """Refuse, before any rep, a scripted proposer that cannot play: not `policy:propose`, a
    plan that does not parse, or no `SKILL.md` under the paths it may change. Every agent's
    scripted server plays it (its wire tells Read, Edit and Write as that agent's tools)."""
    if not proposer.scripted:
        return
    from evalkit.reference.propose import ProposePlan, skill_target

    name = proposer.model[len(PREFIX) :]
    if ProposePlan.parse(name) is None:
        raise ConfigError(f"--proposer {proposer.name}: a scripted proposer is "
                          "policy:propose:<plan>; policy:<name> models play scenarios")  # fmt: skip
    if skill_target(build_subject(suite).root, paths) is None:
        raise ConfigError(f"--proposer {proposer.name}: no {SKILL_FILE} under "
                          f"{', '.join(paths)} for its plan to edit")  # fmt: skip


@dataclass
class ProposerRun:
    """Where and how the proposer agent runs: the tune's confinement, its stop, what stays
    hidden from it, and where its transcript is kept."""

    proposer: ProposerAgent
    keep: Path
    hidden: list[Path]
    backend: str = ""
    unconfined: bool = False
    stop: threading.Event | None = None
    timeout: float = PROPOSER_TIMEOUT


def propose_by_agent(run: ProposerRun, wording_root: Path, brief: str, paths: list[str],
                     round_no: int) -> Proposal:  # fmt: skip
    """Run the proposer agent once on a copy of `wording_root` and say what it changed."""
    scratch = Path(tempfile.mkdtemp(prefix="tune-proposer-", dir=scratch_root()))
    try:
        wording = scratch / COPY
        shutil.copytree(wording_root, wording, symlinks=True)
        (scratch / "brief.md").write_text(brief, encoding="utf-8")
        before = snapshot(wording)
        server = _server(run.proposer, round_no, wording, paths)
        try:
            code, why, cost = _launch(run, scratch, server, brief)
        finally:
            if server is not None:
                run.keep.mkdir(parents=True, exist_ok=True)
                lines = "".join(body.rstrip("\n") + "\n" for body in server.bodies)
                (run.keep / "requests.jsonl").write_text(lines, encoding="utf-8")
                server.stop()
        found = compare_snapshots(before, snapshot(wording), paths, code, b"")
        found.reps, found.cost_usd, found.failed = 1, cost, why
        found.stderr_tail = _tail(run.keep / STDERR)
        return found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _server(proposer: ProposerAgent, round_no: int, wording: Path, paths: list[str]
            ) -> ScriptServer | None:  # fmt: skip
    """A scripted proposer's server, started, playing this round of its plan; None for a real
    model."""
    if not proposer.scripted:
        return None
    from evalkit.reference.propose import ProposePlan
    from evalkit.reference.wire import scripted_server

    plan = ProposePlan.parse(proposer.model[len(PREFIX) :])
    if plan is None:
        raise ConfigError(f"--proposer {proposer.name}: a scripted proposer is "
                          "policy:propose:<plan>")  # fmt: skip
    made = scripted_server(proposer.agent, plan.script(round_no, wording, paths), None, None, None)
    return made.start()


def _launch(run: ProposerRun, scratch: Path, server: ScriptServer | None, brief: str
            ) -> tuple[int | None, str, float]:  # fmt: skip
    """The agent's run, confined; (its exit code, why it failed or '', its cost)."""
    agent = adapter(run.proposer.agent)
    cli = agent.find(None)
    config = scratch / "config"
    config.mkdir()
    env = base_environment({}, config, PROPOSER_RETRIES)
    model = run.proposer.model
    if server is not None:
        model = agent.capabilities.scripted_model or SCRIPTED_ID  # no plan in a URL's path
    credentials = agent.rep_credentials(os.environ) if server is None else {}
    spec = LaunchSpec(cli, model, [], scratch, env, server.base_url if server else None,
                      None if server else PROPOSER_TURNS, None, [], credentials)  # fmt: skip
    launch = agent.launch(spec)
    command, env = launch.command, launch.env
    fds: tuple[int, ...] = ()
    confined: Confined | None = None
    if not run.unconfined:
        confined = _confine(agent, launch.command, launch.env, scratch, cli, run.hidden,
                            launch.folders, launch.home, server, credentials,
                            run.backend)  # fmt: skip
        command, env, fds = confined.command, confined.env, confined.pass_fds
    run.keep.mkdir(parents=True, exist_ok=True)
    out, err = run.keep / TRANSCRIPT, run.keep / STDERR
    try:
        outcome = run_agent(command, scratch / COPY, env, out, err, run.timeout, run.stop,
                            brief.encode("utf-8"), None, fds)  # fmt: skip
    finally:
        if confined is not None:
            confined.hand_back()
            confined.stop()
    return outcome.exit_code, *read_back(out, err, outcome.stopped, outcome.exit_code, server)


def _confine(agent: Agent, command: list[str], env: dict[str, str], scratch: Path, cli: Path,
             hidden: list[Path], folders: list[Path], home: Path | None,
             server: ScriptServer | None, credentials: dict[str, str], name: str
             ) -> Confined:  # fmt: skip
    """The proposer's command in the rep's OS sandbox: the wording copy, its config and its
    own folders writable, the brief readable, its one door out to its API or server."""
    if server is not None:
        env = {**env, "ANTHROPIC_BASE_URL": server.base_url}  # the door's target
    writable = [scratch / COPY, scratch / "config", *(p for p in folders if p.is_dir())]
    hosts = agent.api_hosts({**env, **credentials})
    return backend(name).confine(command, env, scratch / COPY, writable,
                                 home or scratch / "home", cli, hidden,
                                 [scratch / "brief.md"], hosts)  # fmt: skip


def read_back(out: Path, err: Path, stopped: str | None, code: int | None,
               server: ScriptServer | None) -> tuple[str, float]:  # fmt: skip
    """The kept transcript and stderr redacted in place; why the run failed ('' when it
    ended with its result), and its cost (0 for a scripted model)."""
    raw = out.read_bytes().decode("utf-8", "replace") if out.is_file() else ""
    out.write_text(redact_jsonl(raw), encoding="utf-8")
    if err.is_file():
        err.write_text(redact(err.read_bytes().decode("utf-8", "replace")), encoding="utf-8")
    if stopped == "interrupted":
        raise KeyboardInterrupt
    result = parse_lines(raw.splitlines()).result
    cost = 0.0 if server is not None or result is None else result.total_cost_usd
    if stopped is not None:
        return f"the proposer was stopped: {stopped}", cost
    if result is None:
        return f"the proposer's CLI exited {code} without a result", cost
    if code != 0 or result.is_error:
        said = " ".join((result.result or result.subtype or "").split())[:MAX_SAID]
        return f"the proposer's CLI exited {code} with an error: {said}", cost
    return "", cost


def _tail(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-400:] if path.is_file() else ""


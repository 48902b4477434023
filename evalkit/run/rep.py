"""One rep's attempt, in four steps: prepare (sandbox, plugin copies, scripted server,
environment, command line), launch (the agent), finish (score and keep the evidence) and
record (the manifest line, and the TSV row unless it runs again).

A crash, a timeout or an interrupt is an ERROR row with its reason, never a missing row
and never a PASS; `session.py` runs these steps for a sequence of reps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from evalkit import __version__
from evalkit.models import (
    EvidenceLine,
    GuardRecord,
    Reach,
    Rerun,
    ResultRow,
    Transcript,
    Verdict,
    WorldView,
)
from evalkit.records.folder.keep import (
    CHECKER_ERROR,
    STDERR,
    TRANSCRIPT,
    keep_attempt,
    keep_checker_error,
    keep_json,
    keep_log,
    keep_text,
)
from evalkit.records.folder.results import append_row, row_from_verdict
from evalkit.records.kept.evidence import declarations, keep_folder_diffs, ready_baselines
from evalkit.records.kept.redact import redact, redact_jsonl
from evalkit.run.agent import ProcessOutcome, base_environment, run_agent
from evalkit.run.agents.base import Agent, Launch, LaunchSpec
from evalkit.run.agents.hooks import HOOK_LOG, HOOKREC, HookLogWatch
from evalkit.run.agents.registry import adapter, is_default
from evalkit.run.agents.turns import TurnWatch
from evalkit.run.backends import backend, owners
from evalkit.run.backends.confine import CREDENTIAL_FILES, PRIVATE, Confined, unconfined_reach
from evalkit.run.context import RunContext, checked_plugin_dirs, scratch_root
from evalkit.run.judges import default_judge
from evalkit.run.mcp_mocks import mock_arguments, mock_folders
from evalkit.run.observe import Placed, place_wrappers, restore_scripts
from evalkit.run.rerun import RerunPlan, rerun_observed
from evalkit.run.retry import pause_seconds, retry_reason
from evalkit.run.sandbox import TEMPLATES, build_sandbox, isolation_env
from evalkit.run.scripted import (
    RepScript,
    ScriptServer,
    is_policy,
    require_scripted,
)
from evalkit.run.telemetry import Receiver, labelled_env, start_receiver
from evalkit.run.world import Places, lay_out_home, rep_places
from evalkit.scoring.decide import ProcessRecord, decide
from evalkit.scoring.guard import Watch
from evalkit.scoring.hashing import sha256_bytes
from evalkit.scoring.judge import FixedJudge, Judge
from evalkit.scoring.observed import OBSERVE_DIR, log_path
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import WITHOUT_SUBJECT, Subject
from evalkit.suite.task import read_task

OWNERSHIP_PARTIAL = "ownership"
"""Where evalkit is not root (`run/backends/owners.py`): bubblewrap's user namespace maps one
user, so the system's files appear owned by the world's user or by `nobody`, never by root."""
WORLD_PARTIAL = ["mountinfo"]
"""What bubblewrap cannot give the world at all: the kernel's mount table
(`/proc/self/mountinfo`) names each bind's host source. The scan of a scripted rep's
requests leaves these views to this declaration (`scoring/world/leaks.py`,
`PARTIAL_VIEWS`)."""
OBSERVED_PARTIAL = "observed"
"""A suite that observes scripts: each wrapper's run log and the transcript it counts are
mounted at the rep's own host paths, which `/tmp`, the wrapper's text and the mount table
show."""


def world_partial(suite: Suite) -> list[str]:
    """What the world of this suite's reps cannot hold, declared on each row."""
    owned = [] if owners.available() else [OWNERSHIP_PARTIAL]
    return owned + WORLD_PARTIAL + ([OBSERVED_PARTIAL] if suite.config.observe else [])


T = TypeVar("T")
L = TypeVar("L", int, float)
ISOLATION_FIXED = (
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "CLAUDE_CODE_MAX_RETRIES",
    "IS_SANDBOX",
)


@dataclass
class RepOutcome:
    scenario: str
    model: str
    rep: int
    verdict: Verdict
    row: ResultRow
    evidence: Path
    seconds: float
    attempt: int = 1
    retried: list[str] = field(default_factory=list)
    """The reasons earlier attempts were run again, in order."""

    @property
    def breaches(self) -> list[str]:
        """The row's real-vault-breach reasons: to be said loudly the moment the rep ends."""
        return [r for r in self.verdict.reasons if r.startswith("real-vault-breach:")]

    @property
    def guard_changes(self) -> list[str]:
        """Changes seen in a guarded real-world path during this rep, decisive or flagged."""
        found = self.verdict.reasons + self.verdict.flags
        return [r for r in found if r.startswith("real-vault-changed:")]

    kept: Path | None = None
    """The last attempt's sandbox, when it was kept (--keep-sandboxes)."""


@dataclass
class Attempt:
    """One attempt of a rep, scored and its evidence kept, not yet recorded."""

    verdict: Verdict
    transcript: Transcript
    row: ResultRow
    line: EvidenceLine
    folder: Path
    seconds: float
    kept: Path | None = None

    def outcome(
        self, scenario: str, model: str, rep: int, attempt: int, retried: list[str]
    ) -> RepOutcome:
        return RepOutcome(
            scenario, model, rep, self.verdict, self.row, self.folder, self.seconds, attempt,
            list(retried), self.kept,
        )  # fmt: skip


def copy_plugins(plugins: list[Path], dest: Path) -> list[Path]:
    """Each rep loads its own copy of the plugins, so nothing a session writes there (caches,
    bytecode, an agent's edits) reaches the frozen fixture or the next rep."""
    copies = []
    for index, plugin in enumerate(plugins):
        target = dest / f"{index}-{plugin.name}"
        shutil.copytree(plugin, target, symlinks=True)
        copies.append(target)
    return copies


def reps_for(scenario: ScenarioFile, given: int | None) -> int:
    """--reps, else the scenario's own count (a plugin eval case's `runs`), else one."""
    return given or scenario.scenario.launch.reps or 1


def tighter(given: L | None, own: L | None) -> L | None:
    """The tighter of the command line's limit and the scenario's own."""
    return own if given is None else given if own is None else min(given, own)


def record_attempt(ctx: RunContext, done: Attempt, attempt: int, allowed: int) -> str | None:
    """Keep a finished attempt: its manifest line, and its TSV row unless it is run again.
    Returns the reason when it is to be run again (an infrastructural ERROR, retries left,
    no stop), else None once the row is appended."""
    ctx.spend(done.row.cost_usd_estimate)
    ctx.backoff.pause(pause_seconds(done.verdict, done.transcript))
    why = retry_reason(done.verdict, done.transcript)
    if why is not None and attempt <= allowed and not ctx.stop.is_set():
        done.line.superseded_by, done.line.retry_reason = done.line.attempt + 1, why
        _append_line(ctx, done.line)
        return why
    _append_line(ctx, done.line)
    append_row(ctx.results, done.row)
    return None


def _append_line(ctx: RunContext, line: EvidenceLine) -> None:
    ctx.records.append_evidence_line(line)


def rep_guarded_env(suite: Suite, model: str, scratch: Path) -> dict[str, str]:
    """Where this rep's guarded real-world paths point: where the caller pointed them, else,
    for a reference policy (the breach policy writes there on purpose), a stand-in inside
    this rep's own scratch folder. Given to the child process and the decision only; this
    process's environment is never changed, so reps side by side cannot see each other's."""
    names = suite.checker.guarded_env_names()
    harmless = suite.reference.harmless_env(scratch) if is_policy(model) else {}
    return {k: os.environ.get(k) or harmless.get(k, "") for k in names}


@dataclass
class PreparedRep:
    """Everything one attempt needs before its agent starts: the sandbox, the plugin copies,
    the scripted server for a policy, the environment and the command line. Launching it
    runs exactly `command` in `cwd` with `env`; nothing else is set up later."""

    scenario: ScenarioFile
    model: str
    rep: int
    attempt: int
    run_id: str
    timeout: float
    scratch: Path
    sandbox: Path
    command: list[str]
    env: dict[str, str]
    judge: Judge
    guarded: dict[str, str]
    run: dict[str, Any]
    cli: Path
    keep: bool = False
    server: ScriptServer | None = None
    observed: list[Placed] = field(default_factory=list)
    prompt: bytes = field(default=b"", repr=False)
    """The Task, written to the CLI's stdin as it is (no newline added), then stdin closed."""
    reach: Reach | None = None
    confined: Confined | None = None
    world: WorldView | None = None
    turn_cap: tuple[int, str] | None = None
    """(cap, "server" or "stream") when evalkit holds the rep to its turn cap itself."""
    agent: Agent | None = None
    receiver: Receiver | None = None
    """The rep's own receiver of its agent's labels; None for an agent without them."""

    @property
    def cwd(self) -> Path:
        return self.sandbox / "project"

    def close(self, background: bool = False) -> None:
        """Stop its scripted server and remove its scratch folder (unless kept); in the
        background, the removal runs on a thread of its own, which the process waits for
        before it exits, while the rep is recorded and printed."""
        if self.server is not None:
            self.server.stop()
        if self.confined is not None:
            self.confined.stop()
        if self.receiver is not None:
            self.receiver.stop()
        if self.keep:
            return
        if background:
            threading.Thread(
                target=shutil.rmtree, args=(self.scratch, True), name="evalkit-cleanup"
            ).start()
        else:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def discard(self) -> None:
        """Drop an attempt that never launched, kept sandboxes or not."""
        self.keep = False
        self.close()


def prepare_rep(
    ctx: RunContext,
    scenario: ScenarioFile,
    model: str,
    rep: int,
    attempt: int = 1,
    timeout: float | None = None,
    run_id: str | None = None,
    prompt: str | None = None,
) -> PreparedRep:
    """What one attempt needs, up to its agent's start (nothing claimed in the results; `close()`
    removes it). A `prompt` of the caller's own is asked instead of the Task, never read."""
    suite = ctx.suite
    checked_plugin_dirs(suite)
    cli = (agent_of := adapter(ctx.agent)).find(ctx.cli_path)
    subject = ctx.the_subject()
    subject.keep(ctx.workdir)
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-rep-", dir=(root := scratch_root())))
    sandbox = scratch / "sandbox"
    guarded = rep_guarded_env(suite, model, scratch)
    plugins = subject.plugin_dirs() + suite.neighbours  # neighbours in every arm
    places = _places(ctx, agent_of, plugins, sandbox, scratch, guarded)
    server, starting, confined, agent, receiver = None, None, None, None, None
    try:
        if is_policy(model):  # its server starts while the sandbox's git calls run
            want = RepScript(suite, model, scenario, rep, attempt, sandbox, scratch, ctx.workdir,
                             guarded, ctx.agent, *_spellings(places, guarded, cli, subject))
            agent = require_scripted(ctx.scripted).for_rep(want)
            starting = _start_in_background(agent.start)
        observed, config_dir, env = _lay_out(ctx, scenario, sandbox, scratch, root, guarded, places)
        cli_model, judge = model, ctx.judge_override
        if agent is not None and starting is not None:
            server = starting.result()
            cli_model, judge = agent.cli_model, judge or FixedJudge(agent.judge_answer)
        judge = judge or default_judge(suite, ctx.judge_timeout, ctx.notify)
        seen = _seen_plugins(copy_plugins(plugins, scratch / "plugins"), places)
        launch, receiver = _labelled(ctx, agent_of, _launch(
            ctx, agent_of, scenario, model, cli, cli_model, seen, scratch, server, env, places))
        command, env = launch.command, launch.env
        asked = (read_task(scenario) if prompt is None else prompt).encode("utf-8")
        limit = tighter(timeout or ctx.timeout, scenario.scenario.launch.timeout) or ctx.timeout
        run = run_declarations(ctx, suite, command, seen, cli, env, judge, limit, launch)
        writable, hidden = _reach(ctx, sandbox, config_dir, scratch, root, guarded)
        if ctx.unconfined:
            reach = unconfined_reach(writable, hidden)
        else:
            confined = _confine(agent_of, launch, sandbox, scratch, cli, writable, hidden,
                                bool(observed), server, places, ctx.backend,
                                receiver.address if receiver else None)  # fmt: skip
            command, env, reach = confined.command, confined.env, confined.reach
    except BaseException:
        _abandon(confined, server, starting, scratch, receiver)
        raise
    return PreparedRep(
        scenario, model, rep, attempt, run_id or ctx.run_id, limit, scratch, sandbox, command,
        env, judge, guarded, run, cli, ctx.keep_sandboxes, server, observed, asked, reach,
        confined, _view(places, suite, ctx.backend),
        launch.turn_cap, agent_of, receiver,
    )  # fmt: skip


def _view(places: Places | None, suite: Suite, backend_name: str) -> WorldView | None:
    """The rep's world as the row declares it: what this suite's worlds cannot hold, and
    what its backend leaves visible (a container's tell-tales)."""
    if places is None:
        return None
    own = [p for p in backend(backend_name).partial if p not in world_partial(suite)]
    return places.view([*world_partial(suite), *own])


def _places(
    ctx: RunContext,
    agent: Agent,
    plugins: list[Path],
    sandbox: Path,
    scratch: Path,
    guarded: dict[str, str],
) -> Places | None:
    """Where this rep's folders appear in its world; None where it has none (unconfined,
    or an agent whose world is not built yet: it runs at its folders' own paths)."""
    if ctx.unconfined or not agent.capabilities.world or not backend(ctx.backend).remaps:
        return None
    checker = ctx.suite.checker
    names = checker.guarded_env_names()
    spelled = dict(zip(names, checker.guarded_paths({}), strict=False))
    copies = [scratch / "plugins" / f"{i}-{p.name}" for i, p in enumerate(plugins)]
    stores = list(ctx.suite.fixture_dirs())
    return rep_places(ctx.suite.config.world, sandbox, stores, agent.config_folder(scratch),
                      scratch / "home", copies, spelled,
                      agent.capabilities.config_home, agent.name)  # fmt: skip


def _spellings(
    places: Places | None, guarded: dict[str, str], cli: Path, subject: Subject
) -> tuple[dict[str, str], dict[str, str], Path, list[Path]]:
    """For a policy's script: each placeholder's world path, and each guarded path it
    points at (a stand-in for a policy) spelled as the world spells that path; for its
    server's scan, the CLI and the subject's folders, whose own text it exempts."""
    if places is None:
        return {}, {}, cli, subject.plugin_dirs()
    spelled = {guarded[k]: w for k, w in places.guarded.items() if guarded.get(k)}
    return places.placeholders(), spelled, cli, subject.plugin_dirs()


def _seen_plugins(copies: list[Path], places: Places | None) -> list[Path]:
    """The plugin copies as the agent's CLI is pointed at them: at their world paths."""
    if places is None:
        return copies
    shown = places.plugin_paths()
    return [Path(shown.get(c, str(c))) for c in copies]


def _lay_out(
    ctx: RunContext,
    scenario: ScenarioFile,
    sandbox: Path,
    scratch: Path,
    root: Path,
    guarded: dict[str, str],
    places: Places | None = None,
) -> tuple[list[Placed], Path, dict[str, str]]:
    """The sandbox with the subject applied and the observed scripts' wrappers placed, the
    agent's config folder, and its environment (in its world, HOME laid out as a user's)."""
    suite = ctx.suite
    if ctx.template_sandboxes:
        TEMPLATES.copy(suite, scenario, sandbox, root, ctx.world_start)
    else:
        build_sandbox(suite, scenario, sandbox, ctx.world_start)
    ctx.the_subject().apply(suite, sandbox)
    observed = place_wrappers(suite.config.observe, sandbox)
    config_dir = adapter(ctx.agent).config_folder(scratch)
    config_dir.mkdir(parents=True)
    spelled = places.placeholders() if places is not None else None
    env = base_environment(isolation_env(suite, sandbox, spelled), config_dir, ctx.max_retries)
    if places is None:
        env.update({k: v for k, v in guarded.items() if v})
    else:
        lay_out_home(places.world, scratch / "home")
    return observed, config_dir, env


def _reach(
    ctx: RunContext,
    sandbox: Path,
    config_dir: Path,
    scratch: Path,
    root: Path,
    guarded: dict[str, str],
) -> tuple[list[Path], list[Path]]:
    """What the agent may write, and what it may not see."""
    writable = [p for p in sorted(sandbox.iterdir()) if p.is_dir() and p.name != OBSERVE_DIR]
    writable += [p for p in (config_dir, scratch / "plugins") if p.is_dir()]
    hidden = [ctx.suite.root, ctx.workdir, scratch, Path.home()]
    if not any(_inside(root, Path(p)) for p in PRIVATE):  # a private /tmp hides it anyway
        hidden.append(root)
    hidden += [Path(p) for p in ctx.suite.checker.guarded_paths(guarded)]
    return writable, hidden


def _launch(
    ctx: RunContext,
    agent: Agent,
    scenario: ScenarioFile,
    model: str,
    cli: Path,
    cli_model: str,
    plugins: list[Path],
    scratch: Path,
    server: ScriptServer | None,
    env: dict[str, str],
    places: Places | None = None,
) -> Launch:
    """The agent's command line and environment, built by its adapter: against a policy's
    scripted server, or a real model with the agent's own variables (checked before
    planning by `request.check_capabilities`); in a world, the hooks' recorder and log at
    their world paths."""
    launch = scenario.scenario.launch
    # the escape probe walks every way out of its rep: more turns than a case allows
    probe = ctx.scripted is not None and ctx.scripted.confined_only(model)
    turns = tighter(ctx.max_turns, None if probe else launch.max_turns)
    mocks = mock_arguments(ctx.suite, scratch) if agent.capabilities.mcp_mocks else []
    spec = LaunchSpec(
        cli, cli_model, plugins, scratch, env, server.base_url if server else None, turns,
        launch.tools, mocks, agent.rep_credentials(os.environ) if server is None else {},
        places.world.home if places else None, places.hosts(plugins) if places else [],
        places.workspace() if places else [],
    )  # fmt: skip
    made = agent.launch(spec)
    if places is not None:
        places.hooks(scratch / HOOKREC, scratch / HOOK_LOG)
    return made


def _labelled(
    ctx: RunContext, agent: Agent, launch: Launch
) -> tuple[Launch, Receiver | None]:
    """The launch with the agent's labels exported to the rep's own receiver, started, where
    the agent has labels and its rep can reach a receiver; as it was otherwise."""
    reachable = ctx.unconfined or backend(ctx.backend).labels
    receiver = start_receiver(agent.capabilities, reachable)
    env = labelled_env(agent.capabilities, launch.env, receiver, ctx.unconfined)
    return replace(launch, env=env), receiver


def _confine(
    agent: Agent,
    launch: Launch,
    sandbox: Path,
    scratch: Path,
    cli: Path,
    writable: list[Path],
    hidden: list[Path],
    observed: bool,
    server: ScriptServer | None,
    places: Places | None = None,
    backend_name: str = "",
    labels: tuple[str, int] | None = None,
) -> Confined:
    """The agent's command inside its OS sandbox: what it may write, what it may not see,
    and its one door out (to the scripted server, or its API's https hosts)."""
    env = launch.env
    writable = writable + _agent_folders(scratch, launch.folders)
    if server is not None:
        env = {**env, "ANTHROPIC_BASE_URL": server.base_url}  # the door's target
    shown = mock_folders(scratch)
    shown += [Path(env[k]) for k in _ca_files(agent, env)]
    if observed:
        (sandbox / TRANSCRIPT).touch()
        shown.append(sandbox / TRANSCRIPT)
        # the wrappers may append to their log, but the real scripts they run stay as
        # the fixture has them: an agent that could swap one would pass its own test
        writable = [*writable, log_path(sandbox)]
        shown.append(sandbox / OBSERVE_DIR / "real")
    home = launch.home or scratch / "home"
    hosts = agent.api_hosts({**env, **agent.rep_credentials(os.environ)})
    confined = backend(backend_name).confine(launch.command, env, sandbox / "project", writable,
                                             home, cli, hidden, shown, hosts, places,
                                             labels)  # fmt: skip
    if "ANTHROPIC_BASE_URL" not in launch.env:  # the door's target, not a variable it reads
        confined.env.pop("ANTHROPIC_BASE_URL", None)
    return confined


def _ca_files(agent: Agent, env: dict[str, str]) -> list[str]:
    """The variables of the agent's own CA bundles that name a file the sandbox lacks."""
    own = [k for k in agent.capabilities.ca_files if k not in CREDENTIAL_FILES]
    return [k for k in own if env.get(k) and Path(env[k]).is_file()]


def _abandon(
    confined: Confined | None,
    server: ScriptServer | None,
    starting: Future[ScriptServer] | None,
    scratch: Path,
    receiver: Receiver | None = None,
) -> None:
    """Undo a preparation that raised: the sandbox's doors, the rep's receiver, the scripted
    server, the scratch."""
    if confined is not None:
        confined.stop()
    if receiver is not None:
        receiver.stop()
    if server is None and starting is not None and starting.exception() is None:
        server = starting.result()
    if server is not None:
        server.stop()
    shutil.rmtree(scratch, ignore_errors=True)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _agent_folders(scratch: Path, folders: list[Path]) -> list[Path]:
    """What the agent's adapter made in the rep's scratch folder and its process writes to:
    its config home and temp folder, and, when it records hooks, their log and recorder,
    each made before it is mounted."""
    files = [scratch / HOOK_LOG, scratch / HOOKREC]
    if files[1].is_file():
        files[0].touch()
    return [*(p for p in folders if p.is_dir()), *(f for f in files if f.is_file())]


def _start_in_background(fn: Callable[..., T], *args: Any) -> Future[T]:
    """fn(*args) on a thread of its own, its result or exception kept in the future."""
    future: Future[T] = Future()

    def work() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=work, name="evalkit-background").start()
    return future


@dataclass
class LaunchedRep:
    """A prepared attempt whose agent has ended (or was never started because a stop came
    first), with its claimed evidence folder: it must be finished into a record."""

    prepared: PreparedRep
    folder: Path
    outcome: ProcessOutcome
    guard: GuardRecord
    hooks: HookLogWatch | None = None
    """evalkit's own reading of the hooks' log as it arrived, for an agent whose hooks
    evalkit records."""


def launch_rep(ctx: RunContext, prepared: PreparedRep) -> LaunchedRep:
    """Claim the attempt's evidence folder, then run its agent unless a stop came first
    (an interrupted ERROR then, as for a stop during its run). From here on the attempt
    owes a record."""
    p = prepared
    folder = ctx.records.claim_evidence_folder(p.run_id, p.scenario.id, p.model, p.rep, p.attempt)
    outcome = ProcessOutcome(None, 0.0, "interrupted")
    watch = Watch(ctx.suite.checker.guarded_paths(p.guarded))
    hooks = HookLogWatch(p.scratch / HOOK_LOG, p.sandbox / TRANSCRIPT)
    recorded = (p.scratch / HOOKREC).is_file()
    try:
        if not ctx.stop.is_set():
            threading.Thread(target=_ready_to_finish, args=(ctx,), name="evalkit-ready").start()
            outcome = run_agent(
                p.command, p.cwd, p.env, p.sandbox / TRANSCRIPT, p.sandbox / STDERR, p.timeout,
                ctx.stop, p.prompt, _watches(_turn_watch(p), hooks if recorded else None),
                p.confined.pass_fds if p.confined else (),
            )  # fmt: skip
            hooks()  # what arrived since the last poll, the agent now gone
    finally:  # the rep's folders are the caller's again, however the run ended
        if p.confined is not None:
            p.confined.hand_back()
    return LaunchedRep(p, folder, outcome, watch.finish(), hooks if recorded else None)


def _watches(
    turns: TurnWatch | None, hooks: HookLogWatch | None
) -> Callable[[], str | None] | None:
    """What the agent's run asks at every poll: the hooks' log read as it grows, then
    the turn cap (which alone can stop it)."""
    if hooks is None:
        return turns

    def both() -> str | None:
        hooks()
        return turns() if turns is not None else None

    return both


def _turn_watch(p: PreparedRep) -> TurnWatch | None:
    """The turn cap evalkit holds this rep to, when its CLI has no option for one."""
    if p.turn_cap is None or p.agent is None:
        return None
    cap, how = p.turn_cap
    return TurnWatch(cap, how, p.agent, p.sandbox / TRANSCRIPT, p.server)


def _ready_to_finish(ctx: RunContext) -> None:
    """What finishing a rep needs that its agent cannot change, made while the agent runs
    (the CLI is another process): the diff baselines, indexed. Once made, it is shared by
    every later rep; a failure here is left to the finish, which makes them again and says
    why."""
    try:
        ready_baselines(ctx.the_subject().baselines(ctx.suite).values())
    except Exception:  # noqa: S110 - the finish repeats the work and reports its failure
        pass


def finish_rep(ctx: RunContext, launched: LaunchedRep) -> Attempt:
    """Score a launched attempt, keep its evidence, and remove its scratch folder (behind
    the record)."""
    p = launched.prepared
    restore_scripts(p.observed)
    try:
        if p.receiver is not None:
            p.receiver.settle()  # the CLI's exit flush may still be arriving
        result = _score_and_keep(
            ctx, p.run_id, p.scenario, p.model, p.rep, p.attempt, p.sandbox, launched.outcome,
            p.judge, p.cli, p.timeout, launched.folder, p.guarded, launched.guard, p.run,
            p.reach, p.world, list(p.server.markers) if p.server is not None else None,
            p.receiver.text() if p.receiver is not None else None,
            p.server.served_record() if p.server is not None else None,
            rerun_observed(_again(ctx, p)), launched.hooks,
        )  # fmt: skip
    finally:
        p.close(background=True)
    if p.keep:
        result.kept = p.sandbox
    return result


def _again(ctx: RunContext, p: PreparedRep) -> RerunPlan:
    """What re-running the rep's observed scripts needs, once its agent is gone: the rep's
    own limit and backend (none when it ran unconfined), the suite's environment, and what
    stays hidden from the re-run as it was from the agent."""
    suite = ctx.suite
    hidden = (suite.root, ctx.workdir, Path.home())
    project = p.world.roles.get("project", "") if p.world is not None else ""
    confine = None if ctx.unconfined else ctx.backend
    observe, environment = tuple(suite.config.observe), dict(suite.config.environment)
    return RerunPlan(p.sandbox, p.scratch, observe, environment, hidden, p.timeout, confine,
                     project, ctx.stop)  # fmt: skip


_RUNNER_HASH: str | None = None


def runner_source_hash() -> str:
    """sha256 over the code that runs a rep (this package and its agents' adapters): a change
    there is a new bundle."""
    global _RUNNER_HASH
    if _RUNNER_HASH is None:
        root = Path(__file__).resolve().parent
        files = sorted(root.rglob("*.py"))  # the agents' launch adapters included
        parts = [str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() for p in files]
        _RUNNER_HASH = "sha256:" + sha256_bytes(b"\0".join(parts))
    return _RUNNER_HASH


def run_declarations(
    ctx: RunContext,
    suite: Suite,
    command: list[str],
    plugins: list[Path],
    cli: Path,
    env: dict[str, str],
    judge: Judge,
    timeout: float,
    launch: Launch | None = None,
) -> dict[str, Any]:
    """Everything about how a rep was driven that can change its row: the judge (by
    identity, never a command's text), the limits and how each reached the agent
    (`capabilities`: its CLI's option, or evalkit), the CLI's flags with every per-rep path
    replaced by its role (the Task reaches the CLI on stdin, never in its flags), the
    isolation environment, whether the rep was confined, and the runner's code."""
    roles = {str(cli): "<cli>", **{str(p): f"<plugin:{i}>" for i, p in enumerate(plugins)}}
    flags = [roles.get(arg, arg) for arg in command[1:]]
    isolation = dict(suite.config.environment)
    isolation.update({k: env[k] for k in ISOLATION_FIXED if k in env})
    isolation["CLAUDE_CONFIG_DIR"] = "<per-rep>"
    for name in suite.checker.guarded_env_names():
        if env.get(name):
            isolation[name] = "<guarded-path>"
    own = adapter(ctx.agent).declared_env(env)  # a key or endpoint: named, never its value
    isolation.update({k: v for k, v in own.items() if k not in isolation})
    declared = {
        **({} if is_default(ctx.agent) else {"agent": ctx.agent}),
        "judge": judge.identity(),
        "timeout": timeout,
        "max_retries": ctx.max_retries,
        "cli_flags": flags,
        "capabilities": dict(launch.applied) if launch is not None else {},
        "isolation_env": isolation,
        "confinement": "none" if ctx.unconfined else backend(ctx.backend).name,
        **({} if ctx.unconfined else backend(ctx.backend).declarations()),
        **({"escape_proof": ctx.escape_proof or "none"}
           if not ctx.unconfined and backend(ctx.backend).proves_here else {}),  # fmt: skip
        "runner_source": runner_source_hash(),
    }
    if ctx.cli_integrity:
        declared["cli_integrity"] = ctx.cli_integrity
    return declared


def _raw_transcript(agent: str, sandbox: Path, hooks: HookLogWatch | None = None) -> str:
    """The agent's stream, then what evalkit appends after it exits: the hooks' runs as
    evalkit saw them arrive and what its adapter reads from the agent's own session record
    (Codex's patch moves)."""
    raw = _read_text(sandbox / TRANSCRIPT) + (hooks.text() if hooks is not None else "")
    return raw + adapter(agent).session_lines(sandbox.parent)


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""


def _score_and_keep(
    ctx: RunContext,
    run_id: str,
    scenario: ScenarioFile,
    model: str,
    rep: int,
    attempt: int,
    sandbox: Path,
    outcome: ProcessOutcome,
    judge: Judge,
    cli: Path,
    timeout: float,
    folder: Path,
    guarded: dict[str, str],
    guard: GuardRecord,
    run: dict[str, Any],
    reach: Reach | None = None,
    world: WorldView | None = None,
    markers: list[str] | None = None,
    labels: str | None = None,
    served: str | None = None,
    reruns: list[Rerun] | None = None,
    hooks: HookLogWatch | None = None,
) -> Attempt:
    redacted = redact_jsonl(_raw_transcript(ctx.agent, sandbox, hooks))
    telemetry = redact_jsonl(labels) if labels is not None else None
    transcript = parse_lines(redacted.splitlines())
    process = _process_record(outcome, timeout, guarded, guard, reach, world, markers, labels,
                              served is not None)  # fmt: skip
    process.reruns, process.hook_log = reruns, hooks.problems if hooks is not None else []
    (folder / CHECKER_ERROR).unlink(missing_ok=True)
    instrument = ctx.suite.instrument(scenario, ctx.the_subject().baselines(ctx.suite))
    without = ctx.the_subject().variant == WITHOUT_SUBJECT
    verdict = decide(instrument, sandbox, transcript, model, judge, process, folder, without,
                     telemetry, served)  # fmt: skip
    files = _keep_files(ctx, sandbox, folder, redacted, process, guard, instrument.fixtures)
    files.update(_keep_witnesses(folder, telemetry=telemetry, served=served))
    version = transcript.cli_version or ctx.cli_version(cli)
    subject = ctx.the_subject()
    decl = declarations(ctx.suite, scenario.sha256, model, transcript.model_id, version, run,
                        variant=subject.variant, subject_hash=subject.hash)  # fmt: skip
    usage = usage_of(transcript, outcome.seconds)
    line = keep_attempt(
        ctx.records, folder, files, verdict, decl, run_id=run_id, scenario=scenario.id,
        model=model, rep=rep, attempt=attempt, results=ctx.records.relative(ctx.results),
        usage=dict(usage),
    )  # fmt: skip
    row = row_from_verdict(
        verdict, rep=rep, run_id=run_id, time=datetime.now(UTC).isoformat(timespec="seconds"),
        evalkit_version=__version__, cli_version=version, model_id=transcript.model_id or "-",
        bundle_id=line.bundle_id, attempt=attempt, variant=subject.variant,
        subject_hash=subject.hash, **usage,
    )  # fmt: skip
    return Attempt(verdict, transcript, row, line, folder, outcome.seconds)


def _keep_witnesses(folder: Path, **texts: str | None) -> dict[str, str]:
    """What outside witnesses of the rep said (its CLI's labels, its scripted server's
    record), each kept under its role when there was one."""
    kept: dict[str, str] = {}
    for role, text in texts.items():
        kept.update(keep_text(folder, role, text) if text is not None else {})
    return kept


def _process_record(
    outcome: ProcessOutcome,
    timeout: float,
    guarded: dict[str, str],
    guard: GuardRecord,
    reach: Reach | None,
    world: WorldView | None,
    markers: list[str] | None,
    labels: str | None,
    served: bool = False,
) -> ProcessRecord:
    """How the agent process ended, with what it could reach, where its labels went and
    whether its scripted server kept a record."""
    return ProcessRecord(
        exit_code=outcome.exit_code, stopped=outcome.stopped, timeout=timeout,
        guarded_env=guarded, guard_changes=guard.changes(), seconds=round(outcome.seconds, 3),
        reach=reach, world=world, markers=list(markers or []),
        labels="none" if labels is None else "otlp", served="kept" if served else "",
    )  # fmt: skip


def _keep_files(
    ctx: RunContext,
    sandbox: Path,
    folder: Path,
    redacted: str,
    process: ProcessRecord,
    guard: GuardRecord,
    fixtures: dict[str, Path],
) -> dict[str, str]:
    """Every file of the attempt's evidence written into FOLDER, by role: the redacted
    transcript and stderr, the process and guard records, the checker's error, the observed
    scripts' log, and each fixture's diff."""
    files = {
        **keep_text(folder, "transcript", redacted),
        **keep_text(folder, "stderr", redact(_read_text(sandbox / STDERR))),
        **keep_json(folder, "process", process),
        **keep_json(folder, "guard", guard),
        **keep_checker_error(folder),
        **keep_log(sandbox, folder),
    }
    diffs = keep_folder_diffs(ctx.suite, sandbox, folder, fixtures)
    files.update({f"{name}_diff": path for name, path in diffs.items()})
    return files


def usage_of(transcript: Transcript, seconds: float) -> dict[str, int | float]:
    """Tokens, turns, duration and the CLI's cost estimate, from its result line. The duration
    is the harness's own wall time when the CLI never reported one (a crash, a timeout)."""
    result = transcript.result
    if result is None:
        return {"duration_ms": int(seconds * 1000)}
    usage = result.usage

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) else 0

    return {
        "turns": result.num_turns,
        "duration_ms": result.duration_ms or int(seconds * 1000),
        "cost_usd_estimate": round(result.total_cost_usd, 6),
        "input_tokens": count("input_tokens"),
        "output_tokens": count("output_tokens"),
        "cache_read_tokens": count("cache_read_input_tokens"),
        "cache_write_tokens": count("cache_creation_input_tokens"),
    }

"""`evalkit run`: one fresh, isolated, real Claude Code session per rep, scored and recorded.

Every rep ends in exactly one TSV row and one manifest line, whatever happened:
a crash, a timeout or an interrupt is an ERROR row with its reason, never a
missing row and never a PASS.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from evalkit import __version__
from evalkit.errors import ConfigError, RefusedError
from evalkit.models import (
    EvidenceLine,
    GuardRecord,
    Plan,
    PlanCell,
    Reach,
    ResultRow,
    Transcript,
    Verdict,
)
from evalkit.records.evidence import (
    CHECK,
    JUDGE,
    STDERR,
    TRANSCRIPT,
    bundle_id,
    declarations,
    keep_folder_diffs,
    ready_baselines,
    write_check,
)
from evalkit.records.redact import redact, redact_jsonl
from evalkit.records.results import append_row, check_results_file, row_from_verdict
from evalkit.records.workdir import Workdir
from evalkit.reference.escape import PORT_ENV, run_values
from evalkit.reference.placeholders import render
from evalkit.reference.policy import is_policy, scripted_agent
from evalkit.run.agent import ProcessOutcome, base_environment, run_agent
from evalkit.run.agents.clis import agent_name, agent_version, find_agent_cli
from evalkit.run.agents.hooks import HOOK_LOG
from evalkit.run.claude_cli import find_cli
from evalkit.run.cli_versions import InstalledCli
from evalkit.run.confine import PRIVATE, Confined, confine, unconfined_reach
from evalkit.run.credentials import (
    AGENT_CREDENTIALS,
    AGENT_ENDPOINTS,
    agent_credentials,
    require_credentials,
)
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT
from evalkit.run.judges import default_judge
from evalkit.run.observe import Placed, keep_log, place_wrappers, restore_scripts
from evalkit.run.request import validate_request
from evalkit.run.retry import Backoff, RetryWait, pause_seconds, retry_reason
from evalkit.run.sandbox import TEMPLATES, build_sandbox, contamination_above, isolation_env
from evalkit.scoring.decide import CHECKER_ERROR, ProcessRecord, decide
from evalkit.scoring.guard import Watch
from evalkit.scoring.hashing import sha256_bytes, sha256_file
from evalkit.scoring.judge import FixedJudge, Judge
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import NO_SUBJECT_VARIANT, Subject, build_subject
from evalkit.suite.task import read_task

if TYPE_CHECKING:
    from evalkit.models import Script
    from evalkit.reference.scripted_server import ScriptedServer

T = TypeVar("T")
PROCESS = "process.json"
GUARD = "guard.json"
DEFAULT_MAX_RETRIES = 2
ISOLATION_FIXED = (
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "CLAUDE_CODE_MAX_RETRIES",
    "IS_SANDBOX",
)


def new_run_id() -> str:
    return datetime.now(UTC).strftime("r%Y%m%dT%H%M%SZ-") + secrets.token_hex(3)


def default_workdir(suite: Suite) -> Path:
    return suite.root / "results"


def scratch_root() -> Path:
    """Where each rep's sandbox, config dir and plugin copies go. Its path reaches hook
    commands and tool calls unquoted in places evalkit does not control, so it holds no
    whitespace: EVALKIT_SCRATCH with a space is refused, and a system temp folder with one
    gives way to /tmp. Nothing above it may hold a file the CLI would load."""
    chosen = os.environ.get("EVALKIT_SCRATCH")
    root = Path(chosen or tempfile.gettempdir()).resolve()
    if any(c.isspace() for c in str(root)):
        fallback = Path("/tmp").resolve()
        if chosen or any(c.isspace() for c in str(fallback)) or not fallback.is_dir():
            raise RefusedError(
                f"scratch folder {str(root)!r} holds whitespace, which breaks the plugins' "
                "hook commands; set EVALKIT_SCRATCH to a path without spaces"
            )
        root = fallback
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RefusedError(f"scratch folder {root} cannot be made: {exc.strerror}") from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise RefusedError(f"scratch folder {root} is not writable; set EVALKIT_SCRATCH")
    found = contamination_above(root)
    if found is not None:
        raise RefusedError(
            f"scratch folder {root} is under {found}, which the CLI would load into every "
            "session; set EVALKIT_SCRATCH to a folder outside it"
        )
    return root


def checked_plugin_dirs(suite: Suite) -> list[Path]:
    """The CLI ignores a missing --plugin-dir silently, so evalkit refuses it first."""
    dirs = suite.plugin_dirs()
    for path in dirs:
        if not (path / ".claude-plugin" / "plugin.json").is_file():
            raise ConfigError(
                f"{suite.config_path}: plugins: {path} is not a plugin folder "
                "(no .claude-plugin/plugin.json); the CLI would silently run without it"
            )
    return dirs


@dataclass
class Spending:
    usd: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class RunContext:
    """What every rep of a run shares."""

    suite: Suite
    workdir: Path
    results: Path
    run_id: str
    timeout: float = DEFAULT_TIMEOUT
    keep_sandboxes: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    max_retries: int = DEFAULT_MAX_RETRIES
    judge_override: Judge | None = None
    judge_timeout: float = DEFAULT_JUDGE_TIMEOUT
    allow_reserve: bool = False
    """Reserve-set scenarios may run (a measurement): --reserve, or grid --set reserve."""
    notify: Callable[[str], None] | None = None
    """Where a slow judge says it is still waiting (the CLI's stderr)."""
    retry_errors: int = 0
    """Further attempts an infrastructural ERROR gets (--retry-errors)."""
    max_turns: int | None = None
    max_cost_usd: float | None = None
    backoff: Backoff = field(default_factory=Backoff)
    retry_wait: RetryWait = field(default_factory=RetryWait)
    """The jittered wait before each retried attempt."""
    plan_extra: dict[str, Any] = field(default_factory=dict)
    """Recorded on every plan this run writes (a shard's grid digest and slice)."""
    notes: list[str] = field(default_factory=list)
    """What the run did besides reps that a user should hear about (printed by the CLI)."""
    skip_preflight: bool = False
    """Run a real model without proving the instrument first (--skip-preflight)."""
    preflight: Literal["", "passed", "skipped"] = ""
    """What proving the instrument came to, for the plan: passed, skipped, or empty."""
    unconfined: bool = False
    """--unconfined: reps run without their OS sandbox, each row flagged `unconfined`."""
    template_sandboxes: bool = True
    """Build each scenario's first sandbox once and copy it for every rep (TEMPLATES); off,
    each sandbox is built in place, which is quicker when a command runs one rep."""
    cli_path: Path | None = None
    """The CLI a `--cli VERSION` run launches (from the version cache); None: `find_cli`."""
    cli_integrity: str = ""
    """That version's npm integrity hash, declared by every rep it runs."""
    agent: str = "claude"
    """The agent CLI each rep runs (--agent): claude, codex or gemini."""
    _cli_version: str | None = None
    _spending: Spending = field(default_factory=lambda: Spending())
    """Shared by the copies a grid makes per variant, so one budget covers them all."""
    subject: Subject | None = None
    """The wording under test; the suite's own when not given (built on first use)."""
    _subject_lock: threading.Lock = field(default_factory=threading.Lock)

    def the_subject(self) -> Subject:
        with self._subject_lock:
            if self.subject is None:
                self.subject = build_subject(self.suite)
            return self.subject

    def use_cli(self, cli: InstalledCli | None) -> None:
        """Run every rep with this installed version (`--cli`); None keeps `find_cli`'s."""
        if cli is not None:
            self.cli_path, self.cli_integrity, self._cli_version = cli.path, cli.integrity, None

    def cli_version(self, cli: Path) -> str:
        if self._cli_version is None:
            self._cli_version = agent_version(self.agent, cli)
        return self._cli_version

    def spend(self, usd: float) -> None:
        with self._spending.lock:
            self._spending.usd += usd

    @property
    def spent(self) -> float:
        with self._spending.lock:
            return self._spending.usd

    def over_budget(self) -> bool:
        return self.max_cost_usd is not None and self.spent >= self.max_cost_usd

    @property
    def records(self) -> Workdir:
        """The results folder this run records into."""
        return Workdir(self.workdir)

    def check_records(self) -> None:
        """Before anything is planned: every file the run will append to can take an append,
        and the folder holds no other suite's reps."""
        records = self.records
        records.check_writable()
        check_results_file(self.results)
        others = records.recorded_suites() - {self.suite.name}
        if others:
            raise RefusedError(
                f"{self.workdir}: this folder holds reps of suite {', '.join(sorted(others))}, "
                f"not {self.suite.name}; record into another folder, or pass that suite's --suite"
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


def record_plan(
    ctx: RunContext, cells: list[PlanCell], command: str, inner_loop: bool = False
) -> None:
    plan = Plan(
        run_id=ctx.run_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=command,
        cells=cells,
        results=ctx.records.relative(ctx.results),
        suite=ctx.suite.name,
        inner_loop=inner_loop,
        preflight=ctx.preflight,
        **ctx.plan_extra,
    )
    ctx.records.append_plan(plan)


def record_skipped(ctx: RunContext, cells: list[PlanCell], reason: str) -> None:
    """Planned reps that will not run (a budget reached): named in the plan, never a silently
    smaller n."""
    plan = Plan(
        run_id=ctx.run_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=reason,
        cells=[],
        skipped=cells,
        skip_reason=reason,
        results=ctx.records.relative(ctx.results),
        suite=ctx.suite.name,
        preflight=ctx.preflight,
        **ctx.plan_extra,
    )
    ctx.records.append_plan(plan)


def copy_plugins(plugins: list[Path], dest: Path) -> list[Path]:
    """Each rep loads its own copy of the plugins, so nothing a session writes there (caches,
    bytecode, an agent's edits) reaches the frozen fixture or the next rep."""
    copies = []
    for index, plugin in enumerate(plugins):
        target = dest / f"{index}-{plugin.name}"
        shutil.copytree(plugin, target, symlinks=True)
        copies.append(target)
    return copies


def agent_command(
    cli: Path, model: str, plugins: list[Path], max_turns: int | None = None
) -> list[str]:
    """The CLI's command line. It never holds the Task: `-p` reads the prompt from stdin
    (PreparedRep.prompt), so no `ps` on the machine shows it."""
    command = [
        str(cli),
        "-p",
        "--model",
        model,
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-hook-events",
        "--dangerously-skip-permissions",
        "--no-session-persistence",
        "--setting-sources",
        "project",
    ]
    if max_turns is not None:
        command += ["--max-turns", str(max_turns)]
    for plugin in plugins:
        command += ["--plugin-dir", str(plugin)]
    return command


def run_rep(
    ctx: RunContext,
    scenario: ScenarioFile,
    model: str,
    rep: int,
    timeout: float | None = None,
    run_id: str | None = None,
    retries: int | None = None,
) -> RepOutcome:
    """One rep, start to row: attempt 1, then a fresh attempt for each infrastructural ERROR
    while retries last. Every attempt keeps its evidence and manifest line; only the last
    writes the TSV row. A stop requested at any point still ends in its ERROR row."""
    allowed = ctx.retry_errors if retries is None else retries
    rid = run_id or ctx.run_id
    retried: list[str] = []
    attempt = 1
    while True:
        ctx.backoff.wait(ctx.stop)
        ctx.retry_wait.before(attempt, ctx.stop)
        done = _run_attempt(ctx, scenario, model, rep, attempt, timeout or ctx.timeout, rid)
        why = record_attempt(ctx, done, attempt, allowed)
        if why is not None:
            retried.append(why)
            attempt += 1
            continue
        return done.outcome(scenario.id, model, rep, attempt, retried)


def record_attempt(ctx: RunContext, done: Attempt, attempt: int, allowed: int) -> str | None:
    """Keep a finished attempt: its manifest line, and its TSV row unless it is run again.
    Returns the reason when it is to be run again (an infrastructural ERROR, retries left,
    no stop), else None once the row is appended."""
    ctx.spend(done.row.cost_usd_estimate)
    ctx.backoff.pause(pause_seconds(done.verdict, done.transcript))
    why = retry_reason(done.verdict, done.transcript)
    if why is not None and attempt <= allowed and not ctx.stop.is_set():
        done.line.superseded_by, done.line.retry_reason = attempt + 1, why
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
    server: ScriptedServer | None = None
    observed: list[Placed] = field(default_factory=list)
    prompt: bytes = field(default=b"", repr=False)
    """The Task, written to the CLI's stdin as it is (no newline added), then stdin closed."""
    reach: Reach | None = None
    confined: Confined | None = None

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
) -> PreparedRep:
    """Build what one attempt needs, up to the moment its agent would start. Claims nothing
    in the results folder, so a prepared rep that never launches leaves no trace there;
    `close()` removes it."""
    suite = ctx.suite
    checked_plugin_dirs(suite)
    cli = rep_cli(ctx)
    if ctx.agent != "claude":
        cli = find_agent_cli(agent_name(ctx.agent))
    subject = ctx.the_subject()
    subject.keep(ctx.workdir)
    root = scratch_root()
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-rep-", dir=root))
    sandbox = scratch / "sandbox"
    guarded = rep_guarded_env(suite, model, scratch)
    server: ScriptedServer | None = None
    starting: Future[ScriptedServer] | None = None
    confined: Confined | None = None
    try:
        agent = scripted_agent(suite, model, scenario, attempt) if is_policy(model) else None
        names = list(suite.fixture_dirs())
        if agent is not None:  # its server starts while the sandbox's git calls run
            values = suite.reference.script_values(guarded)
            values.update(
                run_values(Path.home(), ctx.workdir, scenario.path, os.environ.get(PORT_ENV))
            )
            script = render(agent.plan.script, sandbox, names, values)
            choose = agent.chooser(scenario.id, rep, lambda s: render(s, sandbox, names, values))
            starting = _start_in_background(
                _scripted_server, script, agent.fault, choose, ctx.agent, scratch
            )
        if ctx.template_sandboxes:
            TEMPLATES.copy(suite, scenario, sandbox, root)
        else:
            build_sandbox(suite, scenario, sandbox)
        subject.apply(suite, sandbox)
        observed = place_wrappers(suite.config.observe, sandbox)
        config_dir = scratch / "claude-config"
        config_dir.mkdir()
        env = base_environment(isolation_env(suite, sandbox), config_dir, ctx.max_retries)
        env.update({k: v for k, v in guarded.items() if v})
        cli_model = model
        judge = ctx.judge_override
        if agent is not None and starting is not None:
            server = starting.result()
            for key in [k for k in env if k.startswith("ANTHROPIC_")]:
                del env[key]
            env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="evalkit-scripted")
            cli_model = agent.cli_model
            if judge is None:
                judge = FixedJudge(agent.plan.judge_answer)
        judge = judge or default_judge(suite, ctx.judge_timeout, ctx.notify)
        rep_plugins = copy_plugins(subject.plugin_dirs(), scratch / "plugins")
        if ctx.agent == "claude":
            command = agent_command(cli, cli_model, rep_plugins, ctx.max_turns)
        else:
            command, env = _other_agent(
                ctx.agent, cli, scratch, server, cli_model, rep_plugins, env
            )
        prompt = read_task(scenario).encode("utf-8")
        limit = timeout or ctx.timeout
        run = run_declarations(ctx, suite, command, rep_plugins, cli, env, judge, limit)
        writable = [p for p in sorted(sandbox.iterdir()) if p.is_dir()]
        writable += [p for p in (config_dir, scratch / "plugins") if p.is_dir()]
        hidden = [suite.root, ctx.workdir, scratch, Path.home()]
        if not any(_inside(root, Path(p)) for p in PRIVATE):  # a private /tmp hides it anyway
            hidden.append(root)
        hidden += [Path(p) for p in suite.checker.guarded_paths(guarded)]
        if ctx.unconfined:
            reach = unconfined_reach(writable, hidden)
        else:
            if ctx.agent != "claude":
                writable += _agent_folders(scratch)
            if ctx.agent != "claude" and server is not None:
                env = {**env, "ANTHROPIC_BASE_URL": server.base_url}  # the door's target
            shown = []
            if observed:
                (sandbox / TRANSCRIPT).touch()
                shown.append(sandbox / TRANSCRIPT)
            home = scratch / "home"
            if ctx.agent != "claude" and _inside(Path(env.get("HOME", "/")), scratch):
                home = Path(env["HOME"])  # the agent's own config home (Gemini's)
            confined = confine(command, env, sandbox / "project", writable, home, cli, hidden,
                               shown, ctx.agent)  # fmt: skip
            command, env, reach = confined.command, confined.env, confined.reach
    except BaseException:
        if confined is not None:
            confined.stop()
        if server is None and starting is not None and starting.exception() is None:
            server = starting.result()
        if server is not None:
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return PreparedRep(
        scenario, model, rep, attempt, run_id or ctx.run_id, limit, scratch, sandbox, command,
        env, judge, guarded, run, cli, ctx.keep_sandboxes, server, observed, prompt, reach,
        confined,
    )  # fmt: skip


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _scripted_server(
    script: Script,
    fault: str | None,
    choose: Callable[[str], Script] | None = None,
    agent: str = "claude",
    scratch: Path | None = None,
) -> ScriptedServer:
    if agent == "codex" and scratch is not None:
        from evalkit.reference.wire.responses import ResponsesServer
        from evalkit.run.agents.codex import skills_root

        return ResponsesServer(script, fault, skills_root(scratch)).start()
    if agent == "gemini":
        from evalkit.reference.wire.gemini import GeminiServer

        return GeminiServer(script, fault).start()
    from evalkit.reference.scripted_server import ScriptedServer

    return ScriptedServer(script, fault, choose=choose).start()


def _other_agent(
    agent: str,
    cli: Path,
    scratch: Path,
    server: ScriptedServer | None,
    model: str,
    plugins: list[Path],
    env: dict[str, str],
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of an agent other than Claude Code (its adapter in
    `evalkit.run.agents`): against a policy's scripted server, or a real model with the
    agent's credentials (checked before planning by `request.check_agent`)."""
    base_url = server.base_url if server is not None else None
    keys = agent_credentials(agent) if server is None else {}
    if agent == "gemini":
        from evalkit.run.agents.gemini import prepare_gemini

        return prepare_gemini(cli, scratch, base_url, model, plugins, env, keys)
    from evalkit.run.agents.codex import prepare_codex

    launch = prepare_codex(cli, scratch, base_url, model, plugins, env, keys)
    return launch.command, launch.env


def _agent_folders(scratch: Path) -> list[Path]:
    """What another agent's adapter made in the rep's scratch folder and its process writes
    to: its config home, its temp folder, the hook log and its recorder, each made before it
    is mounted."""
    (scratch / HOOK_LOG).touch()
    made = [scratch / n for n in ("codex-home", "gemini-home", "tmp") if (scratch / n).is_dir()]
    files = [scratch / HOOK_LOG, scratch / "hookrec.py"]
    return [*made, *(f for f in files if f.is_file())]


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


def launch_rep(ctx: RunContext, prepared: PreparedRep) -> LaunchedRep:
    """Claim the attempt's evidence folder, then run its agent unless a stop came first
    (an interrupted ERROR then, as for a stop during its run). From here on the attempt
    owes a record."""
    p = prepared
    folder = ctx.records.claim_evidence_folder(p.run_id, p.scenario.id, p.model, p.rep, p.attempt)
    outcome = ProcessOutcome(None, 0.0, "interrupted")
    watch = Watch(ctx.suite.checker.guarded_paths(p.guarded))
    if not ctx.stop.is_set():
        threading.Thread(target=_ready_to_finish, args=(ctx,), name="evalkit-ready").start()
        outcome = run_agent(
            p.command, p.cwd, p.env, p.sandbox / TRANSCRIPT, p.sandbox / STDERR, p.timeout,
            ctx.stop, p.prompt,
        )  # fmt: skip
    return LaunchedRep(p, folder, outcome, watch.finish())


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
        result = _score_and_keep(
            ctx, p.run_id, p.scenario, p.model, p.rep, p.attempt, p.sandbox, launched.outcome,
            p.judge, p.cli, p.timeout, launched.folder, p.guarded, launched.guard, p.run,
            p.reach,
        )  # fmt: skip
    finally:
        p.close(background=True)
    if p.keep:
        result.kept = p.sandbox
    return result


def _run_attempt(
    ctx: RunContext,
    scenario: ScenarioFile,
    model: str,
    rep: int,
    attempt: int,
    timeout: float,
    run_id: str,
) -> Attempt:
    prepared = prepare_rep(ctx, scenario, model, rep, attempt, timeout, run_id)
    try:
        launched = launch_rep(ctx, prepared)
    except BaseException:
        prepared.discard()
        raise
    return finish_rep(ctx, launched)


def preflight(
    suite: Suite, models: list[str] | None = None, agent: str = "claude"
) -> tuple[list[Path], Path]:
    """What every rep needs before anything is planned or launched: the plugins, the CLI, and
    for a real model some credential that reaches the agent's CLI."""
    if models is not None:
        require_credentials(models, agent=agent)
    if agent != "claude":
        return checked_plugin_dirs(suite), find_agent_cli(agent_name(agent))
    return checked_plugin_dirs(suite), find_cli()


def rep_cli(ctx: RunContext) -> Path:
    """The CLI a rep launches: the version the run asked for, else the one `find_cli` finds."""
    return ctx.cli_path if ctx.cli_path is not None else find_cli()


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
) -> dict[str, Any]:
    """Everything about how a rep was driven that can change its row: the judge (by
    identity, never a command's text), the limits, the CLI's flags with every per-rep path
    replaced by its role (the Task reaches the CLI on stdin, never in its flags), the
    isolation environment, whether the rep was confined, and the runner's code."""
    roles = {str(cli): "<cli>", **{str(p): f"<plugin:{i}>" for i, p in enumerate(plugins)}}
    flags = [roles.get(arg, arg) for arg in command[1:]]
    isolation = dict(suite.config.environment)
    isolation.update({k: env[k] for k in ISOLATION_FIXED if k in env})
    isolation["CLAUDE_CONFIG_DIR"] = "<per-rep>"
    if "CODEX_HOME" in env:
        isolation["CODEX_HOME"] = "<per-rep>"
    if "GEMINI_CLI_NO_RELAUNCH" in env:
        isolation.update(HOME="<per-rep>", GEMINI_CLI_NO_RELAUNCH=env["GEMINI_CLI_NO_RELAUNCH"])
    for name in [*AGENT_CREDENTIALS.get(ctx.agent, ()), *AGENT_ENDPOINTS.get(ctx.agent, ())]:
        if env.get(name):  # a real model's key or endpoint: named, never its value
            loopback = env[name].startswith("http://127.0.0.1:")
            isolation[name] = "<scripted-server>" if loopback else "<set>"
    for name in suite.checker.guarded_env_names():
        if env.get(name):
            isolation[name] = "<guarded-path>"
    for name in sorted(env):
        if name.startswith(("ANTHROPIC_", "CLAUDE_CODE_")) and name not in isolation:
            loopback = env[name].startswith("http://127.0.0.1:")
            isolation[name] = "<scripted-server>" if loopback else "<set>"
    declared = {
        **({} if ctx.agent == "claude" else {"agent": ctx.agent}),
        "judge": judge.identity(),
        "timeout": timeout,
        "max_retries": ctx.max_retries,
        "cli_flags": flags,
        "isolation_env": isolation,
        "confinement": "none" if ctx.unconfined else "bwrap",
        "runner_source": runner_source_hash(),
    }
    if ctx.cli_integrity:
        declared["cli_integrity"] = ctx.cli_integrity
    return declared


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
) -> Attempt:
    raw = _read_text(sandbox / TRANSCRIPT) + _read_text(sandbox.parent / HOOK_LOG)
    redacted = redact_jsonl(raw)
    transcript = parse_lines(redacted.splitlines())
    process = ProcessRecord(
        exit_code=outcome.exit_code,
        stopped=outcome.stopped,
        timeout=timeout,
        guarded_env=guarded,
        guard_changes=guard.changes(),
        seconds=round(outcome.seconds, 3),
        reach=reach,
    )
    (folder / CHECKER_ERROR).unlink(missing_ok=True)
    baselines = ctx.the_subject().baselines(ctx.suite)
    bare = ctx.the_subject().variant == NO_SUBJECT_VARIANT
    verdict = decide(
        ctx.suite, scenario, sandbox, transcript, model, judge, process, folder, baselines,
        without_subject=bare,
    )  # fmt: skip
    (folder / TRANSCRIPT).write_text(redacted, encoding="utf-8")
    stderr = _read_text(sandbox / STDERR)
    (folder / STDERR).write_text(redact(stderr), encoding="utf-8")
    (folder / PROCESS).write_text(process.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (folder / GUARD).write_text(guard.model_dump_json(indent=2) + "\n", encoding="utf-8")
    files = {
        "transcript": TRANSCRIPT,
        "stderr": STDERR,
        "check": CHECK,
        "process": PROCESS,
        "guard": GUARD,
    }
    if (folder / CHECKER_ERROR).is_file():
        files["checker_error"] = CHECKER_ERROR
    files.update(keep_log(sandbox, folder))
    files.update(
        {
            f"{name}_diff": path
            for name, path in keep_folder_diffs(ctx.suite, sandbox, folder, baselines).items()
        }
    )
    write_check(folder, verdict)
    if verdict.judge is not None:
        files["judge"] = JUDGE
    version = transcript.cli_version or ctx.cli_version(cli)
    subject = ctx.the_subject()
    decl = declarations(
        ctx.suite,
        scenario.sha256,
        model,
        transcript.model_id,
        version,
        run,
        variant=subject.variant,
        subject_hash=subject.hash,
    )
    bid = bundle_id(decl)
    usage = usage_of(transcript, outcome.seconds)
    row = row_from_verdict(
        verdict,
        rep=rep,
        run_id=run_id,
        time=datetime.now(UTC).isoformat(timespec="seconds"),
        evalkit_version=__version__,
        cli_version=version,
        model_id=transcript.model_id or "-",
        bundle_id=bid,
        attempt=attempt,
        variant=subject.variant,
        subject_hash=subject.hash,
        **usage,
    )
    line = EvidenceLine(
        run_id=run_id,
        scenario=scenario.id,
        model=model,
        rep=rep,
        evidence=ctx.records.relative(folder),
        files=files,
        file_hashes={role: sha256_file(folder / rel) for role, rel in files.items()},
        declarations=decl,
        bundle_id=bid,
        verdict=verdict.verdict,
        results=ctx.records.relative(ctx.results),
        attempt=attempt,
        usage=dict(usage),
    )
    return Attempt(verdict, transcript, row, line, folder, outcome.seconds)


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


def run_reps(
    ctx: RunContext,
    scenario: ScenarioFile,
    model: str,
    reps: int,
    on_done: Callable[[RepOutcome], None] | None = None,
) -> list[RepOutcome]:
    preflight(ctx.suite, [model], ctx.agent)
    keys = [(ctx.run_id, scenario.id, model, rep) for rep in range(1, reps + 1)]
    validate_request(ctx, [scenario], [model], [], keys)
    if reps == 1:
        ctx.template_sandboxes = False
    ctx.check_records()
    from evalkit.run.preflight import prove_instrument

    prove_instrument(ctx, scenario, [model])
    record_plan(
        ctx,
        [PlanCell(scenario=scenario.id, model=model, reps=reps)],
        f"run {scenario.id} {model} --reps {reps}" + run_options(ctx),
    )
    from evalkit.run.pipeline import RepJob, run_in_order

    jobs = [RepJob(ctx, scenario, model, rep) for rep in range(1, reps + 1)]
    return run_in_order(jobs, ctx.stop, on_done).done


def run_options(ctx: RunContext) -> str:
    """The options that change what a rep does, as the plan's command line shows them."""
    shown = ""
    if ctx.retry_errors:
        shown += f" --retry-errors {ctx.retry_errors}"
    if ctx.max_turns is not None:
        shown += f" --max-turns {ctx.max_turns}"
    if ctx.max_cost_usd is not None:
        shown += f" --max-cost-usd {ctx.max_cost_usd:g}"
    if ctx.preflight == "skipped":
        shown += " --skip-preflight"
    return shown

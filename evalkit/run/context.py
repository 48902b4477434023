"""What every rep of one invocation shares: the suite, the results folder, the run id, the
limits, the budget, the stop, and the plans it writes before any rep runs.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evalkit.errors import ConfigError, RefusedError
from evalkit.models import PlanCell
from evalkit.records.folder.plans import write_plan
from evalkit.records.folder.results import check_results_file
from evalkit.records.folder.run_ids import default_workdir as default_workdir
from evalkit.records.folder.run_ids import new_run_id as new_run_id
from evalkit.records.folder.workdir import Workdir
from evalkit.run.agents.registry import adapter
from evalkit.run.defaults import DEFAULT_JUDGE_TIMEOUT, DEFAULT_TIMEOUT
from evalkit.run.prerequisites.cli_versions import InstalledCli
from evalkit.run.prerequisites.credentials import require_credentials
from evalkit.run.retry import Backoff, RetryWait
from evalkit.run.sandbox import contamination_above
from evalkit.run.scripted import ScriptedModels
from evalkit.run.world import world_start
from evalkit.scoring.judge import Judge
from evalkit.suite.config import Suite
from evalkit.suite.subject import Subject, build_subject

DEFAULT_MAX_RETRIES = 2


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
    suite.neighbours  # noqa: B018 - each neighbour checked a plugin folder before a rep
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
    escape_proof: Literal["", "held", "failed"] = ""
    """Where the backend can be proven only on the machine it runs on (srt on macOS): what the
    preflight's `policy:escape` rep came to there, declared by every rep; empty elsewhere."""
    unconfined: bool = False
    backend: str = ""
    """--confine: the confinement backend ('' for this platform's default)."""
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
    scripted: ScriptedModels | None = None
    """The scripted models `policy:<name>` runs with, handed in from above (the reference
    layer's `Policies`); None: a policy model is refused."""
    world_start: str = field(default_factory=world_start)
    """The day the run's world dates its history from (recorded in its plans)."""
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
            self._cli_version = adapter(self.agent).version(cli)
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


def record_plan(
    ctx: RunContext, cells: list[PlanCell], command: str, inner_loop: bool = False
) -> None:
    write_plan(
        ctx.records, ctx.run_id, command, cells, results=ctx.records.relative(ctx.results),
        suite=ctx.suite.name, inner_loop=inner_loop, preflight=ctx.preflight,
        world_start=ctx.world_start, **ctx.plan_extra,
    )  # fmt: skip


def record_skipped(ctx: RunContext, cells: list[PlanCell], reason: str) -> None:
    """Planned reps that will not run (a budget reached): named in the plan, never a silently
    smaller n."""
    write_plan(
        ctx.records, ctx.run_id, reason, [], results=ctx.records.relative(ctx.results),
        suite=ctx.suite.name, skipped=cells, skip_reason=reason, preflight=ctx.preflight,
        world_start=ctx.world_start, **ctx.plan_extra,
    )  # fmt: skip


def preflight(
    suite: Suite, models: list[str] | None = None, agent: str = "claude"
) -> tuple[list[Path], Path]:
    """What every rep needs before anything is planned or launched: the plugins, the CLI, and
    for a real model some credential that reaches the agent's CLI."""
    if models is not None:
        require_credentials(models, agent=agent)
    return checked_plugin_dirs(suite), adapter(agent).find(None)


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

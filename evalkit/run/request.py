"""Refusing a run or grid before anything is planned or written.

Every check here runs once, in the library, before `plans.jsonl` is touched, so a script
calling `run_reps` or `run_grid` gets the same refusals as the command line: a plan is only
ever written for reps that can run, and a refused request leaves nothing to count.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import ConfigError, PrerequisiteError, RefusedError
from evalkit.models import NAME_PATTERN, is_name
from evalkit.run.context import RunContext, scratch_root
from evalkit.run.retry import MAX_RETRY_ERRORS
from evalkit.run.scripted import PREFIX, is_policy, require_scripted
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.template_tasks import refuse_placeholders

if TYPE_CHECKING:
    from evalkit.records.folder.workdir import RepKey
    from evalkit.suite.config import Suite


def check_limit(name: str, seconds: float) -> None:
    """A limit in seconds is a finite number above zero: 0, a negative and nan are refused
    (every rep a timeout ERROR, or no limit at all)."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"{name} must be a number of seconds above 0, not {seconds!r}")


def check_run_id(run_id: str) -> None:
    """A run id names folders inside WORKDIR/evidence, so it is a name, never a path."""
    if not is_name(run_id):
        raise ConfigError(f"run id {run_id!r}: a run id is a name ({NAME_PATTERN}), not a path")


def check_retries(retries: int) -> None:
    """Each retry is another paid attempt at an outage; more than a few only hides it."""
    if not 0 <= retries <= MAX_RETRY_ERRORS:
        raise ConfigError(f"--retry-errors takes 0 to {MAX_RETRY_ERRORS}, not {retries}")


def check_fresh_reps(ctx: RunContext, reps: list[RepKey]) -> None:
    """No rep this request plans is planned or kept already under its run id: a second plan
    for it could never be recorded, and the folder would stay incomplete for good."""
    if not reps:
        return
    held: set[RepKey] = set()
    for plan in ctx.records.read_plans().items:
        for cell in [*plan.cells, *plan.skipped]:
            held.update((plan.run_id, cell.scenario, cell.model, k) for k in cell.numbers())
    for key in reps:
        if key in held or ctx.records.evidence_folder(*key).exists():
            run_id, scenario, model, rep = key
            raise RefusedError(
                f"run id {run_id} already holds {scenario} {model} rep {rep} in "
                f"{ctx.workdir}; give a new --run-id, or `grid --resume` to finish that run"
            )


def check_models(ctx: RunContext, models: list[str]) -> None:
    for model in models:
        if not model.strip() or any(c.isspace() for c in model):
            raise ConfigError(f"model {model!r}: a model name holds no whitespace")
        if not is_policy(model):
            continue
        scripted = require_scripted(ctx.scripted)
        if not scripted.accepts(ctx.suite, model[len(PREFIX) :], ctx.agent):
            raise ConfigError(
                f"unknown policy '{model[len(PREFIX):]}' for checker "
                f"{ctx.suite.checker.name}; known: {', '.join(scripted.names(ctx.suite))}"
            )


def check_scenarios(scenarios: list[ScenarioFile], allow_reserve: bool) -> None:
    held = [s.id for s in scenarios if s.scenario.set == "reserve"]
    if held and not allow_reserve:
        raise RefusedError(
            f"{', '.join(held)} {'is' if len(held) == 1 else 'are'} in the frozen reserve set; "
            "running it is a measurement: pass --reserve (grid: --set reserve) to mean it"
        )


def check_tasks(scenarios: list[ScenarioFile], models: list[str]) -> None:
    """A real model is never run on a placeholder Task from `evalkit init`: it would pay for
    a measurement of nothing. The scripted policies prove the instrument there as ever."""
    real = [m for m in models if not is_policy(m)]
    if real:
        refuse_placeholders(scenarios, f"running {real[0]} on it")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_workdir(ctx: RunContext) -> None:
    """WORKDIR is a folder evalkit can write, and not inside anything a sandbox copies (its
    evidence would end up in later reps' sandboxes)."""
    work = ctx.workdir.resolve()
    for name, fixture in ctx.suite.fixture_dirs().items():
        if _inside(work, fixture.resolve()):
            raise RefusedError(
                f"{work}: WORKDIR is inside the suite's fixture '{name}' ({fixture}); every "
                "later sandbox would copy this run's evidence: choose a folder outside it"
            )
    for plugin in ctx.suite.plugin_dirs() + ctx.suite.neighbours:
        if _inside(work, plugin.resolve()):
            raise RefusedError(f"{work}: WORKDIR is inside the plugin {plugin}; choose another")
    existing = next((p for p in (work, *work.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise RefusedError(f"{work}: WORKDIR must be a folder, and {existing} is a file")
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RefusedError(f"{work}: WORKDIR cannot be made: {exc.strerror}") from None
    if not os.access(work, os.W_OK | os.X_OK):
        raise RefusedError(f"{work}: WORKDIR is not writable")


def check_results(ctx: RunContext) -> None:
    """The results file can be appended to: not a folder, its folder writable."""
    path = ctx.results
    if path.is_dir():
        raise RefusedError(f"{path}: the results file is a folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise RefusedError(f"{path}: the results file is not writable")
    folder = next((p for p in path.parents if p.exists()), None)
    if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise RefusedError(f"{path}: the results file's folder is not writable")


def check_confinement(ctx: RunContext, models: list[str]) -> None:
    """Reps run confined unless --unconfined says otherwise; where they cannot be, refuse."""
    from evalkit.run.backends import require
    from evalkit.run.backends.confine import UNCONFINED_HINT, require_reachable_api

    if ctx.unconfined:
        policies = [m for m in models if is_policy(m)]
        held = [m for m in policies if require_scripted(ctx.scripted).confined_only(m)]
        if held:
            raise RefusedError(
                f"{held[0]} runs only confined: unconfined, its attempts to write outside "
                "its rep would land in HOME and the results folder; leave out --unconfined"
            )
        return
    require(ctx.backend)
    from evalkit.run.agents.registry import adapter

    agent = adapter(ctx.agent)
    real = [m for m in models if not is_policy(m)]
    if agent.capabilities.preflight_checked:
        for model in models:
            require_reachable_api(dict(os.environ), is_policy(model))
    elif real and not agent.reachable(os.environ):
        names = ", ".join(agent.capabilities.endpoints)
        raise PrerequisiteError(
            f"--agent {ctx.agent}: its API base URL ({names}) is not https://, so a confined "
            f"rep cannot reach it; fix it, {UNCONFINED_HINT}"
        )


def check_agent(ctx: RunContext, models: list[str]) -> None:
    """An agent evalkit knows, and for a real model of one besides Claude Code, its
    credential in the environment (Claude Code's is checked with its preflight)."""
    from evalkit.run.agents.registry import adapter
    from evalkit.run.prerequisites.credentials import require_credentials

    if not adapter(ctx.agent).capabilities.preflight_checked:
        require_credentials(models, agent=ctx.agent)


def check_capabilities(ctx: RunContext, scenarios: list[ScenarioFile], models: list[str]) -> None:
    """Every limit a rep would be held to reaches its agent (its CLI's option, or evalkit):
    one it cannot take is refused here, in one line naming the limit and the agent, so no
    plan records a limit that would be dropped."""
    from evalkit.run.agents.registry import adapter

    agent = ctx.agent
    caps = adapter(agent).capabilities
    if ctx.cli_path is not None and not caps.cli_versions:
        raise RefusedError(f"--cli chooses Claude Code's version; --agent {agent} runs its "
                           "pinned CLI: leave out --cli")  # fmt: skip
    for scenario in scenarios:
        tools = scenario.scenario.launch.tools
        if tools is not None and not caps.tool_list:
            raise RefusedError(
                f"{scenario.id} limits its agent to the tools {', '.join(tools) or '(none)'}, "
                f"which --agent {agent} cannot be limited to; run it with --agent claude"
            )
    mocks = mock_servers(ctx.suite)
    if mocks and not caps.mcp_mocks:
        raise RefusedError(
            f"the suite's MCP mocks ({', '.join(mocks)}) cannot be served to --agent {agent}; "
            "run it with --agent claude"
        )
    capped = ctx.max_turns is not None or any(s.scenario.launch.max_turns for s in scenarios)
    real = [m for m in models if not is_policy(m)]
    if capped and real and not caps.caps_real_turns:
        raise RefusedError(
            f"--agent {agent} cannot hold {real[0]} to a turn cap (--max-turns, or a case's "
            "max_turns): its CLI has no option for one and its stream does not tell model "
            "turns apart; leave the cap out or run it with --agent claude"
        )


def mock_servers(suite: Suite) -> list[str]:
    """The names of the suite's fixed MCP mock servers (none without mocks)."""
    import json

    rel = suite.config.mcp_mocks
    if rel is None:
        return []
    try:
        return sorted(json.loads((suite.root / rel).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return [rel]


def validate_request(
    ctx: RunContext,
    scenarios: list[ScenarioFile],
    models: list[str],
    timeouts: list[float],
    reps: list[RepKey] | None = None,
    retries: list[int] | None = None,
) -> None:
    """Every refusal a run or grid can meet, before its plan is written; `reps` are the reps
    its new plan would name, `retries` any per-rep --retry-errors besides the run's."""
    check_run_id(ctx.run_id)
    for count in {ctx.retry_errors, *(retries or [])}:
        check_retries(count)
    for seconds in {ctx.timeout, *timeouts}:
        check_limit("--timeout", seconds)
    check_limit("--judge-timeout", ctx.judge_timeout)
    check_agent(ctx, models)
    check_capabilities(ctx, scenarios, models)
    check_models(ctx, models)
    check_confinement(ctx, models)
    check_scenarios(scenarios, ctx.allow_reserve)
    check_tasks(scenarios, models)
    check_workdir(ctx)
    check_results(ctx)
    check_fresh_reps(ctx, reps or [])
    scratch_root()

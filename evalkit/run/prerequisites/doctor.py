"""`evalkit doctor`: is this machine ready to measure? Each check is OK or FAIL with its fix.

Nothing secret is printed: credentials are named, never shown. The optional ping sends one
minimal request through the real CLI, the same way a rep would, so a user learns that a key
is wrong before a grid spends an hour proving it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.run.agent import base_environment, run_agent
from evalkit.run.agents.claude import CREDENTIAL_WAYS
from evalkit.run.agents.registry import adapter
from evalkit.run.prerequisites.claude_cli import HOW, PINNED_VERSION, cli_version, find_cli
from evalkit.run.prerequisites.cli_versions import chosen_cli
from evalkit.run.prerequisites.credentials import credential_variables, credentials_present
from evalkit.run.scripted import ScriptedModels
from evalkit.scoring.transcript import invalid_reason, read_transcript
from evalkit.suite.config import Suite
from evalkit.suite.lock import drift, lock_path, read_lock

PING_PROMPT = "Reply with the single word OK."
PING_TIMEOUT = 120.0
FIXES = {
    "agent-error:not-logged-in": CREDENTIAL_WAYS,
    "agent-error:auth-failed": "the credential was refused: check the key or token, or the "
    "gateway at ANTHROPIC_BASE_URL",
    "agent-error:rate-limited": "the API is rate-limiting this key: wait, or run fewer --jobs",
    "agent-error:overloaded": "the API is overloaded: try again later (--retry-errors helps)",
    "agent-error:connection-failed": "no connection to the API: check the network, proxy "
    "settings (HTTPS_PROXY) or ANTHROPIC_BASE_URL",
    "agent-error:connection-lost": "no connection to the API: check the network, proxy "
    "settings (HTTPS_PROXY) or ANTHROPIC_BASE_URL",
}


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def check_cli(version: str | None = None) -> Check:
    """The CLI `find_cli` finds, or with `version` that version from the cache (installed
    and probed for every option evalkit passes)."""
    if version:
        try:
            found = chosen_cli(version)
        except EvalkitError as exc:
            return Check("claude cli", False, str(exc), "see `evalkit cli list`")
        assert found is not None
        return Check("claude cli", True, f"{version} at {found.path} ({found.integrity})")
    try:
        cli = find_cli()
    except EvalkitError as exc:
        return Check("claude cli", False, str(exc).split(";")[0], HOW)
    version = cli_version(cli)
    if not version:
        return Check("claude cli", False, f"{cli} does not answer --version", HOW)
    note = "" if version == PINNED_VERSION else f" (evalkit is measured with {PINNED_VERSION})"
    return Check("claude cli", True, f"{version} at {cli}{note}")


def check_confinement(name: str = "") -> Check:
    """The backend a rep would be confined by, its version, and the one fix it lacks."""
    from evalkit.run.backends import backend

    try:
        chosen = backend(name)
    except EvalkitError as exc:
        return Check("confinement", False, str(exc).split(": ")[0], str(exc).partition(": ")[2])
    why = chosen.unavailable()
    if why is not None:
        reason, _, fix = why.partition(": ")
        fix = fix.removeprefix("or ")  # after an install step in a refusal; alone, the fix
        return Check("confinement", False, f"{chosen.name}: {reason}", fix or why)
    seen = f"; rows say world:partial:{','.join(chosen.partial)}" if chosen.partial else ""
    version = chosen.version() or "(version unknown)"
    return Check("confinement", True, f"{chosen.name} {version} confines every rep{seen}")


def check_runtimes() -> Check:
    """What of the language runtimes on PATH every rep mounts besides the system folders:
    named, so a user sees that a wrapper in their own bin/ brings in nothing beside it."""
    import os

    from evalkit.run.backends.confine import runtimes

    mounted = runtimes(os.environ.get("PATH", "")).mounted
    if not mounted:
        return Check("runtimes", True, "the system's own; nothing else is mounted for them")
    return Check("runtimes", True, "mounted read-only in every rep: " + ", ".join(mounted))


def check_agent_cli(agent: str) -> Check:
    """Another agent's pinned CLI: found, answering --version, at its pin."""
    from evalkit.run.agents.clis import CLIS, agent_cli_version, agent_name, find_agent_cli

    cli = CLIS[agent_name(agent)]
    try:
        path = find_agent_cli(cli.agent)
    except EvalkitError as exc:
        return Check(f"{agent} cli", False, str(exc).split(";")[0], cli.how())
    version = agent_cli_version(path, cli.agent)
    if not version:
        said = f"{path} does not answer --version as the {agent} CLI does"
        return Check(f"{agent} cli", False, said, cli.how())
    note = "" if version == cli.version else f" (evalkit is measured with {cli.version})"
    return Check(f"{agent} cli", True, f"{version} at {path}{note}")


def check_credentials(agent: str = "claude") -> Check:
    present = credentials_present(agent=agent)
    if not present:
        named = "set " + " or ".join(credential_variables(agent))
        ways = adapter(agent).capabilities.credential_ways or named
        return Check("credentials", False, "none reaches the CLI", ways)
    return Check("credentials", True, "set (values not shown): " + ", ".join(present))


def check_plugins(suite: Suite) -> Check:
    problems = []
    for path in suite.plugin_dirs():
        manifest = path / ".claude-plugin" / "plugin.json"
        try:
            json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{manifest}: {type(exc).__name__}")
    if problems:
        return Check(
            "plugins", False, "; ".join(problems), "each plugin needs .claude-plugin/plugin.json"
        )
    return Check("plugins", True, f"{len(suite.plugin_dirs())} valid")


def check_lock(suite: Suite) -> Check:
    lock = read_lock(suite)
    if lock is None:
        missing = f"{lock_path(suite)} does not exist"
        return Check("lock", False, missing, "run `evalkit suite freeze`")
    changed = drift(suite, lock)
    if changed:
        return Check(
            "lock",
            False,
            "no longer matches: " + ", ".join(changed),
            "run `evalkit suite freeze` if the change is deliberate",
        )
    return Check("lock", True, f"frozen, {len(lock.hashes)} entries match")


def check_self_test(suite: Suite, scripted: ScriptedModels, agent: str = "claude") -> Check:
    wrong, total = scripted.self_test(suite, agent)
    if wrong:
        return Check(
            "self-test",
            False,
            f"{wrong}/{total} cells other than designed",
            "run `evalkit self-test` to see them",
        )
    return Check("self-test", True, f"{total}/{total} cells as designed")


def ping(model: str) -> Check:
    """One minimal real request through the CLI, in a throwaway folder and config dir."""
    try:
        cli = find_cli()
    except EvalkitError as exc:
        return Check("ping", False, str(exc).split(";")[0], HOW)
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-ping-"))
    try:
        (scratch / "config").mkdir()
        env = base_environment({}, scratch / "config", max_retries=1)
        command = [
            str(cli), "-p", PING_PROMPT, "--model", model, "--output-format", "stream-json",
            "--verbose", "--max-turns", "1", "--tools", "", "--no-session-persistence",
            "--setting-sources", "",
        ]  # fmt: skip
        out, err = scratch / "out.jsonl", scratch / "err.txt"
        done = run_agent(command, scratch, env, out, err, PING_TIMEOUT)
        if done.stopped:
            return Check("ping", False, f"no answer within {PING_TIMEOUT:g} s", FIXES[
                "agent-error:connection-lost"])  # fmt: skip
        transcript = read_transcript(out)
        why = invalid_reason(transcript)
        if why is None:
            return Check("ping", True, f"{transcript.model_id or model} answered")
        fix = next((f for k, f in FIXES.items() if why.startswith(k)), "see the CLI's message")
        return Check("ping", False, why, fix)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def doctor(
    suite: Suite | None,
    ping_model: str | None = None,
    self_test: ScriptedModels | None = None,
    cli: str | None = None,
    agent: str = "claude",
    confine: str = "",
) -> list[Check]:
    """`self_test`: the scripted models whose self-test is one of the checks (None: none).
    For another agent, its CLI stands where Claude Code's does, its own credentials where
    Claude Code's do, and its self-test reads that agent's own stream."""
    checks = [
        check_cli(cli) if adapter(agent).capabilities.cli_versions else check_agent_cli(agent),
        check_confinement(confine),
        check_runtimes(),
        check_credentials(agent),
    ]
    if suite is not None:
        checks += [check_plugins(suite), check_lock(suite)]
        if self_test is not None:
            checks.append(check_self_test(suite, self_test, agent))
    if ping_model is not None:
        checks.append(ping(ping_model))
    return checks

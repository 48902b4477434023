"""Does any credential reach the CLI? Asked before a real-model run plans anything.

Without one the CLI still starts, fails its first request and ends "Not logged in": a row
that measures nothing. Each rep has a fresh config dir, so a login stored by `claude /login`
never reaches it; only the environment does (see `run/agent.py` for what passes through).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from evalkit.errors import PrerequisiteError
from evalkit.run.scripted import is_policy

CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)
WAYS = (
    "set ANTHROPIC_API_KEY, or ANTHROPIC_AUTH_TOKEN, or CLAUDE_CODE_OAUTH_TOKEN "
    "(`claude setup-token` prints one), or point ANTHROPIC_BASE_URL at a gateway; "
    "or use policy:oracle, the offline scripted model"
)


AGENT_CREDENTIALS = {
    "codex": ("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"),
    "gemini": ("GEMINI_API_KEY",),
}
"""Each other agent's credential variables, passed into its reps and nowhere else. Codex
reads these three (measured in 0.169.0's binary); a login it stored in ~/.codex never
reaches a rep's own CODEX_HOME. Gemini is driven with API-key auth only."""
AGENT_ENDPOINTS = {
    "codex": ("OPENAI_BASE_URL",),
    "gemini": ("GOOGLE_GEMINI_BASE_URL",),
}
"""Where an agent's API is, when not its default host: passed into its reps with the key."""


def credential_variables(agent: str = "claude") -> tuple[str, ...]:
    return AGENT_CREDENTIALS.get(agent, CREDENTIAL_VARIABLES)


def credentials_present(
    environ: Mapping[str, str] | None = None, agent: str = "claude"
) -> list[str]:
    """Names (never values) of the credential variables that are set and not empty."""
    env = os.environ if environ is None else environ
    return [name for name in credential_variables(agent) if env.get(name, "").strip()]


def require_credentials(
    models: list[str], environ: Mapping[str, str] | None = None, agent: str = "claude"
) -> None:
    real = [m for m in models if not is_policy(m)]
    if not real or credentials_present(environ, agent):
        return
    if agent == "claude":
        raise PrerequisiteError(f"no credential reaches the Claude Code CLI for {real[0]}: {WAYS}")
    names = " or ".join(credential_variables(agent))
    raise PrerequisiteError(
        f"--agent {agent} with {real[0]} needs {names} set; none is "
        "(or use policy:oracle, the offline scripted model)"
    )


def agent_credentials(agent: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The credential and endpoint variables of `agent` that are set: what its real-model rep
    is given, and only that rep."""
    env = os.environ if environ is None else environ
    names = (*credential_variables(agent), *AGENT_ENDPOINTS.get(agent, ()))
    return {n: env[n] for n in names if env.get(n, "").strip()}

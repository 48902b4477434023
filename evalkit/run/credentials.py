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


def credentials_present(environ: Mapping[str, str] | None = None) -> list[str]:
    """Names (never values) of the credential variables that are set and not empty."""
    env = os.environ if environ is None else environ
    return [name for name in CREDENTIAL_VARIABLES if env.get(name, "").strip()]


def require_credentials(models: list[str], environ: Mapping[str, str] | None = None) -> None:
    real = [m for m in models if not is_policy(m)]
    if real and not credentials_present(environ):
        raise PrerequisiteError(f"no credential reaches the Claude Code CLI for {real[0]}: {WAYS}")

"""Does a credential reach the agent's CLI? Asked before a real-model run plans anything.

Without one the CLI still starts, fails its first request and ends "Not logged in" (or
401): a row that measures nothing. Each rep has a fresh config home, so a login stored by
`claude /login` or `codex login` never reaches it; only the environment does. Which
variables count, and which cannot be passed on faithfully, is each adapter's declared
table (`run/agents/`): a refused one, set, refuses the run naming it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from evalkit.errors import PrerequisiteError
from evalkit.run.agents.registry import adapter
from evalkit.run.scripted import is_policy


def credential_variables(agent: str = "claude") -> tuple[str, ...]:
    return adapter(agent).capabilities.credentials


def credentials_present(
    environ: Mapping[str, str] | None = None, agent: str = "claude"
) -> list[str]:
    """Names (never values) of the credential variables that are set and not empty."""
    env = os.environ if environ is None else environ
    return [name for name in credential_variables(agent) if env.get(name, "").strip()]


def require_credentials(
    models: list[str], environ: Mapping[str, str] | None = None, agent: str = "claude"
) -> None:
    """For a real model: no variable the agent cannot be given faithfully, and at least one
    credential it reads; else one line naming them."""
    real = [m for m in models if not is_policy(m)]
    if not real:
        return
    env = os.environ if environ is None else environ
    refused = adapter(agent).capabilities.refused
    for name, why in refused.items():
        if env.get(name, "").strip():
            raise PrerequisiteError(f"--agent {agent} with {real[0]}: {name} is set, but {why}")
    if credentials_present(env, agent):
        return
    if ways := adapter(agent).capabilities.credential_ways:
        raise PrerequisiteError(f"no credential reaches the {agent} CLI for {real[0]}: {ways}")
    names = " or ".join(credential_variables(agent))
    raise PrerequisiteError(
        f"--agent {agent} with {real[0]} needs {names} set; none is "
        "(or use policy:oracle, the offline scripted model)"
    )


def agent_credentials(agent: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The credential, endpoint and CA variables of `agent` that are set: what its
    real-model rep is given (in the form its adapter passes them on), and only that rep."""
    return adapter(agent).rep_credentials(os.environ if environ is None else environ)

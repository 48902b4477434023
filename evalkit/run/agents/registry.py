"""Every agent's adapter, found by the name `--agent` gives: the one place a name becomes an
adapter, so no caller compares an agent's name."""

from __future__ import annotations

from evalkit.run.agents.base import Agent
from evalkit.run.agents.claude import Claude
from evalkit.run.agents.clis import agent_name
from evalkit.run.agents.codex import Codex
from evalkit.run.agents.gemini import Gemini

ADAPTERS: dict[str, Agent] = {a.name: a for a in (Claude(), Codex(), Gemini())}
DEFAULT = "claude"
"""The agent a row names when its bundle names none, and `--agent`'s default."""


def adapter(name: str) -> Agent:
    """The adapter of the agent `name`, or one clear refusal naming the known ones."""
    return ADAPTERS[agent_name(name)]


def is_default(name: str) -> bool:
    """Whether `name` is the agent a bundle need not name (Claude Code's rows predate it)."""
    return adapter(name) is ADAPTERS[DEFAULT]

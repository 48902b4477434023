"""Normalisers from another agent's event stream into evalkit's one transcript model, so the
checkers read the same tool names whichever agent ran. They decide what a verdict sees, so
they are scoring code and hashed with it. Each is keyed by its agent's adapter name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalkit.scoring.streams.codex import HOOK_EVENTS as CODEX_HOOKS
from evalkit.scoring.streams.codex import model_items as codex_items
from evalkit.scoring.streams.gemini import HOOK_EVENTS as GEMINI_HOOKS
from evalkit.scoring.streams.gemini import model_items as gemini_items

HOOK_EVENTS: dict[str, dict[str, str]] = {"codex": CODEX_HOOKS, "gemini": GEMINI_HOOKS}
"""Claude Code's hook events each other agent can run, under its own names; an agent not
named here (Claude Code) runs them all."""
SHELL_STATUS_UNSAID = frozenset({"gemini"})
"""Agents whose shell call is marked a success whatever its command's exit status (Gemini's
shell tool, measured on its pin: a command that printed anything shows its output alone);
a status is read from such a call only where its text says one."""
MODEL_ITEMS: dict[str, Callable[[list[dict[str, Any]]], list[str]]] = {
    "codex": codex_items,
    "gemini": gemini_items,
}
"""Agents whose stream shows the model's answers item by item, not turn by turn, and how
each is read into item keys (`items.py`); an agent not named here (Claude Code) groups a
turn's blocks by the server's message id."""

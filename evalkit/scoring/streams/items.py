"""The keys of a model's answer as Codex's and Gemini's streams show it, item by item.

Claude Code's stream groups a turn's blocks by the server's message id, so its served-turn
check matches whole turns (`scoring/tampering/served.py`). Codex's and Gemini's streams do
not: each shows the model's words and its tool calls one item at a time, under ids the CLI
made, and never says which answer an item came from. So a served answer is also recorded
item by item, each keyed as the stream shows it: a text by its words (stripped), a tool call
by its name where the stream shows the name the server sent (Gemini) or by being a call
alone (Codex shows the kind of run, a command or a file change, not the function called),
never by its input, which the CLI reports in its own form. The scripted servers key what they
serve with these same functions, so the two sides meet.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def digest(value: Any) -> str:
    """A short, stable digest of a JSON value (a key never holds the text it keys)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def text_item(text: str) -> str:
    """The key of a text the model said; empty for a blank one, which no stream shows."""
    return digest(["text", text.strip()]) if text.strip() else ""


def call_item(name: str = "") -> str:
    """The key of one tool call, by the name its stream shows ('' where it shows none)."""
    return digest(["call", name])


def answer_key(items: list[str]) -> str:
    """The key of a whole answer (a turn) from its items' keys, in order; empty when none."""
    kept = [item for item in items if item]
    return digest(kept) if kept else ""

"""A file's leading ``---`` YAML block, read from text the agent under test may have written:
a safe loader that refuses aliases, over a capped prefix."""

from __future__ import annotations

from typing import Any

import yaml

from evalkit.scoring.untrusted_yaml import MAX_CHARS, load_untrusted

FRONT_MATTER_CAP = MAX_CHARS


def split_front_matter(text: str) -> tuple[dict[str, Any], str] | None:
    """The leading ``---`` block as a mapping, and the text after its closing fence, as it
    is; None when there is no such block that parses to a mapping."""
    lines = text[:FRONT_MATTER_CAP].splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return None
    offset = len(lines[0])
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            try:
                data = load_untrusted("".join(lines[1:index]))
            except yaml.YAMLError:
                return None
            if not isinstance(data, dict):
                return None
            return data, text[offset + len(lines[index]) :]
        offset += len(lines[index])
    return None


def front_matter(text: str) -> dict[str, Any] | None:
    """The leading ``---`` YAML block as a mapping, or None when there is none that parses."""
    found = split_front_matter(text)
    return found[0] if found is not None else None

"""A file's leading ``---`` YAML block, read from text the agent under test may have written.

It is hostile input: an alias lets a few hundred bytes expand into billions of values that
the next `str()` walks for hours, so aliases are refused, and the text is capped, before
anything is built."""

from __future__ import annotations

from typing import Any

import yaml

MAX_CHARS = 64_000


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases are not read", None)
        return super().compose_node(parent, index)


def load_untrusted(text: str) -> Any:
    """The YAML document in text; yaml.YAMLError when it does not parse, holds an alias or
    is longer than MAX_CHARS."""
    if len(text) > MAX_CHARS:
        raise yaml.YAMLError(f"longer than {MAX_CHARS} characters")
    return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506


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

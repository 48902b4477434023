"""Loading YAML the agent under test wrote (a note's or record's front matter).

It is hostile input: an alias lets a few hundred bytes expand into billions of values that
the next `str()` walks for hours, so aliases are refused, and the text is capped, before
anything is built.
"""

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

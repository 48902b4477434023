"""`policy:phrase:<words>`: a scripted model that reads the subject's wording as sent.

A wording loop needs a model whose behaviour turns on the wording, or it has nothing to
find. This one reads the skill listing the CLI put in each request (the system prompt, the
tool descriptions, the CLI's own reminders: never the user's words, so never the Task): on
a positive it plays the checker's ideal policy only when a line naming one of the subject's
skills holds `<words>`, and its never-acting policy otherwise; on a negative it plays the
always-acting policy when such a line holds "always", and the ideal one otherwise. Words are
joined by `+` in the name (`policy:phrase:outlives+the+task`) and matched case-folded, with
runs of whitespace as one space.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError

NAME = "phrase:"
EAGER_WORD = "always"
"""The word that turns the policy eager on negatives."""
_WORDS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9'.-]*(\+[A-Za-z0-9][A-Za-z0-9'.-]*)*$")


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class Phrase:
    words: str
    """The phrase, case-folded, words joined by one space."""

    @classmethod
    def parse(cls, policy: str) -> Phrase | None:
        """The phrase a policy name asks for; None for any other policy."""
        if not policy.startswith(NAME):
            return None
        raw = policy[len(NAME) :]
        if not _WORDS.match(raw):
            raise ConfigError(
                f"policy:{policy}: expected policy:phrase:WORD[+WORD...] (letters, digits, "
                "' . -), e.g. policy:phrase:outlives+the+task"
            )
        return cls(_folded(raw.replace("+", " ")))

    def listing(self, body: dict[str, Any], skills: Iterable[str]) -> str:
        """The lines of what the CLI sent that name one of `skills`, case-folded."""
        from evalkit.scoring.world.leaks import request_pieces

        names = [s.casefold() for s in skills]
        found = []
        for _, text, _ in request_pieces(body):
            for line in text.splitlines():
                folded = _folded(line)
                if any(name in folded for name in names):
                    found.append(folded)
        return "\n".join(found)

    def acts(self, body: dict[str, Any], skills: Iterable[str], positive: bool) -> bool:
        """Whether this request is played as the acting behaviour: on a positive, when the
        skill's line holds the phrase; on a negative, when it holds "always"."""
        listed = self.listing(body, skills)
        wanted = self.words if positive else EAGER_WORD
        return re.search(rf"(?<![a-z0-9]){re.escape(wanted)}(?![a-z0-9])", listed) is not None


def subject_skills(folders: Iterable[Path]) -> list[str]:
    """`plugin:skill` of every skill in the subject's plugin folders, as the CLI lists them."""
    from evalkit.suite.catalog import plugin_manifest_name

    names = []
    for folder in folders:
        skills = folder / "skills"
        if not skills.is_dir():
            continue
        try:
            plugin = plugin_manifest_name(folder, "plugin")
        except ConfigError:
            plugin = folder.name
        names += [f"{plugin}:{s.name}" for s in sorted(skills.iterdir()) if s.is_dir()]
    return names


def body_chooser(
    phrase: Phrase, skills: list[str], positive: bool, acting: Any, idle: Any
) -> Callable[[dict[str, Any]], Any]:
    """What the scripted server is handed: a request body in, the script to serve out."""
    return lambda body: acting if phrase.acts(body, skills, positive) else idle

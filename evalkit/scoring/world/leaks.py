"""Where a marker reached the model from the agent's world, by channel.

A request the CLI sends its model holds the system prompt (with the environment's context:
the working directory, the platform, the git status), the tool definitions, and the
conversation. Of the conversation only what the world contributed is read: each tool's
result and the CLI's reminders (a hook's output among them). The Task (the user's own text)
and the model's earlier turns are never read; a tool result is not blamed for a word its own
call named (an agent that wrote `ls /nope-sandbox` hears the word back), and two texts are
exempt everywhere: the lines this CLI version sends from an empty, marker-free world (its
Bash tool description says "sandbox"), and the subject's own text (a plugin's wording).

Each hit is a reason `marker:<channel>:<word>`, channel one of `CHANNELS`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evalkit.scoring.jstext import input_text
from evalkit.scoring.world.markers import Markers

CHANNELS = ("system-prompt", "env-context", "tool-result", "hook-output")
_ENV_OPEN = re.compile(r"<env>|^gitStatus:|working directory:", re.IGNORECASE)
_ENV_CLOSE = "</env>"
_REMINDER = "<system-reminder>"
_REMINDER_END = "</system-reminder>"
_HOOK = re.compile(r"\bhook\b", re.IGNORECASE)
_MIN_FRAGMENT = 8
CLI_OWN = re.compile(
    r"/\.claude/shell-snapshots/snapshot-|^at (?:\S+ )?\(?(?:\[eval\]|node:internal/)"
)
"""Lines the tools print in any world: the CLI's own shell wrapper of each Bash call
(`source` its snapshot, then `eval` the command) as the process table shows it, and the
stack frames of a `node -e` script (`at [eval]:1:15`)."""
PARTIAL_VIEWS = {
    "mountinfo": re.compile(
        r"^\d+ \d+ \d+:\d+ \S+ \S+ \S+.* - \S+ \S+ |^\S+ on \S+ type \S+ \("
    ),
}
"""A view of the world a backend cannot make whole, by its name in `world:partial:<names>`,
as the shape of one of its lines: `/proc/self/mountinfo`'s (and `mount`'s), whose mount
sources are the host's folders. A row that declares the view is not failed for a marker in
such a line; one that does not declare it is."""


@dataclass(frozen=True)
class Exempt:
    """What no channel is blamed for: the CLI's own lines (exact, stripped) and fragments
    of the subject's text (each a stripped line, or the value of a `key: value` line)."""

    cli_lines: frozenset[str] = frozenset()
    subject: tuple[str, ...] = ()

    @classmethod
    def of(cls, markers: Markers, cli_lines: Iterable[str], subject_text: Iterable[str]) -> Exempt:
        """Only lines holding a marker can matter, so only those are kept."""
        fragments: dict[str, None] = {}
        for text in subject_text:
            for line in text.splitlines():
                for part in _fragments(line.strip()):
                    if len(part) >= _MIN_FRAGMENT and markers.find(part):
                        fragments.setdefault(part, None)
        kept = frozenset(line for line in cli_lines if markers.find(line))
        return cls(kept, tuple(sorted(fragments, key=len, reverse=True)))


def _fragments(line: str) -> list[str]:
    key, sep, value = line.partition(": ")
    parts = [line]
    if sep and re.fullmatch(r"[\w\s.-]+", key.strip("-# ")):
        parts.append(value.strip().strip("'\""))
    return parts


@dataclass
class Scan:
    """A suite's markers and exemptions, applied to one text of one channel at a time."""

    markers: Markers
    exempt: Exempt = field(default_factory=Exempt)
    partial: tuple[str, ...] = ()
    """The views declared partial on the rep's row (`PARTIAL_VIEWS`' names, `observed`)."""
    hidden: tuple[str, ...] = ()
    """With `observed` declared: the rep's own host names its observed scripts' log and
    transcript are mounted under, taken out of a line before it is read."""

    def words(self, text: str, own: str = "") -> list[str]:
        found: dict[str, None] = {}
        said = {w.lower() for w in self.markers.find(own)} if own else set()
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped or stripped in self.exempt.cli_lines or self._declared(stripped):
                continue
            if CLI_OWN.search(stripped):
                continue
            if "observed" in self.partial:
                for name in self.hidden:
                    stripped = stripped.replace(name, " ")
            hits = self.markers.find(stripped)
            if hits:
                for fragment in self.exempt.subject:
                    if fragment in stripped:
                        stripped = stripped.replace(fragment, " ")
                hits = self.markers.find(stripped) if self.exempt.subject else hits
            for word in hits:
                if word.lower() not in said:
                    found.setdefault(word, None)
        return list(found)

    def _declared(self, line: str) -> bool:
        return any(PARTIAL_VIEWS[v].search(line) for v in self.partial if v in PARTIAL_VIEWS)

    def reasons(self, pieces: Iterable[tuple[str, str, str]]) -> list[str]:
        """`marker:<channel>:<word>` for each (channel, text, own words) piece, each once."""
        seen: dict[str, None] = {}
        for channel, text, own in pieces:
            for word in self.words(text, own):
                seen.setdefault(f"marker:{channel}:{word}", None)
        return list(seen)

    def request(self, body: dict[str, Any]) -> list[str]:
        """Every marker one Messages API request body carries from the world."""
        return self.reasons(request_pieces(body))


def request_pieces(body: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(channel, text, the call's own input) of everything the world put in a request."""
    yield from _system_pieces(_text_of(body.get("system")))
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            yield "system-prompt", _text_of(tool.get("description")), ""
    calls: dict[str, str] = {}
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if message.get("role") == "assistant":
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = input_text(block.get("input"))
            continue
        for block in blocks:
            yield from _user_block(block, calls)


def _user_block(block: Any, calls: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    if not isinstance(block, dict):
        return
    if block.get("type") == "tool_result":
        own = calls.get(str(block.get("tool_use_id")), "")
        result, reminders = _reminders(_text_of(block.get("content")))
        yield "tool-result", result, own
        for reminder in reminders:
            yield _reminder_channel(reminder), reminder, ""
    elif block.get("type") == "text":
        text = _text_of(block.get("text"))
        if text.lstrip().startswith(_REMINDER):  # never the user's own words (the Task)
            for reminder in _reminders(text)[1]:
                yield _reminder_channel(reminder), reminder, ""


def _reminder_channel(reminder: str) -> str:
    """A reminder the CLI adds: a hook's output when it says so, else the environment's
    context (CLAUDE.md, the date)."""
    return "hook-output" if _HOOK.search(reminder.split("\n", 2)[0] + reminder[:200]) else (
        "env-context"
    )


def _reminders(text: str) -> tuple[str, list[str]]:
    """The text outside the CLI's `<system-reminder>` blocks, and each block."""
    outside, found = [], []
    rest = text
    while _REMINDER in rest:
        before, _, after = rest.partition(_REMINDER)
        inside, _, rest = after.partition(_REMINDER_END)
        outside.append(before)
        found.append(inside)
    outside.append(rest)
    return "".join(outside), found


def _system_pieces(text: str) -> Iterator[tuple[str, str, str]]:
    """The system prompt, its environment sections (`<env>`, the git status) apart."""
    plain: list[str] = []
    env: list[str] = []
    inside = False
    for line in text.splitlines():
        if _ENV_OPEN.search(line):
            inside = True
        (env if inside else plain).append(line)
        if _ENV_CLOSE in line:
            inside = False
    yield "system-prompt", "\n".join(plain), ""
    yield "env-context", "\n".join(env), ""


def _text_of(value: Any) -> str:
    """The text of a string, or of a list of content blocks (their `text` fields)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v.get("text") if isinstance(v, dict) else v) for v in value)
    return ""

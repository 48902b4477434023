"""A turn cap evalkit holds an agent to when its CLI has no option for one: asked at every
poll of the running rep, it names `max-turns` once the cap is passed, and the runner stops
the rep (an ERROR `budget:max-turns`, as Claude Code's own `--max-turns` ends).

- `server`: the scripted server holds the first request for a turn past the cap unanswered
  and says so; nothing past the cap is ever played.
- `stream`: the agent's live stream, read as it grows, its model turns counted by the
  adapter's marks (`base.Turns`); the rep is stopped when a turn past the cap starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from evalkit.run.agents.base import Agent, Turns


class Held(Protocol):
    def hold_past(self, turns: int) -> None: ...

    @property
    def held(self) -> bool: ...


class TurnWatch:
    def __init__(
        self, cap: int, how: str, agent: Agent, stream: Path, server: Held | None
    ) -> None:
        self.cap = cap
        self.how = how
        self.agent = agent
        self.stream = stream
        self.server = server
        self.turns = Turns()
        self._offset = 0
        self._rest = b""
        if how == "server" and server is not None:
            server.hold_past(cap)

    def __call__(self) -> str | None:
        if self.how == "server":
            return "max-turns" if self.server is not None and self.server.held else None
        return "max-turns" if self._count() > self.cap else None

    def _count(self) -> int:
        """The model turns the stream shows so far, reading only what it gained."""
        try:
            with self.stream.open("rb") as source:
                source.seek(self._offset)
                data = source.read()
        except OSError:
            return self.turns.count
        self._offset += len(data)
        *lines, self._rest = (self._rest + data).split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self.turns.feed(self.agent.mark(event))
        return self.turns.count

"""The scripted server's encodings for wire protocols other than Anthropic's: the same
script, policies and faults, spoken as another agent's API expects; and the same fabricated
run told in each agent's own stream. Both are keyed by the name of the agent's adapter
(`run/agents/`); an agent named in neither speaks Anthropic's Messages API and Claude Code's
stream-json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit.models import Script
    from evalkit.reference.agent_streams import StreamEncoder
    from evalkit.reference.scripted_server import ScriptedServer


OTHER_WIRES = ("codex", "gemini")
"""The adapters whose scripted server speaks a wire other than Anthropic's Messages API."""


def speaks_messages(agent: str) -> bool:
    """Whether `agent`'s scripted server reads Anthropic Messages API requests."""
    return agent not in OTHER_WIRES


def scripted_server(
    agent: str,
    script: Script,
    fault: str | None,
    choose: Callable[[str], Script] | None,
    skills: Path | None,
) -> ScriptedServer:
    """The scripted server `agent`'s CLI speaks to, not started; a Codex skill is read from
    `skills`, where its rep finds it."""
    from evalkit.reference.scripted_server import ScriptedServer
    from evalkit.reference.wire.gemini import GeminiServer
    from evalkit.reference.wire.responses import ResponsesServer

    servers: dict[str, Callable[[], ScriptedServer]] = {
        "codex": lambda: ResponsesServer(script, fault, skills or Path()),
        "gemini": lambda: GeminiServer(script, fault),
    }
    made = servers.get(agent)
    return made() if made is not None else ScriptedServer(script, fault, choose=choose)


def stream_encoder(agent: str, skills: Path | None) -> StreamEncoder:
    """The encoder of `agent`'s stream (a Codex skill read from `skills`)."""
    from evalkit.reference.agent_streams import ClaudeEncoder, CodexEncoder, GeminiEncoder

    encoders: dict[str, Callable[[], StreamEncoder]] = {
        "codex": lambda: CodexEncoder(skills or Path()),
        "gemini": GeminiEncoder,
    }
    made = encoders.get(agent)
    return made() if made is not None else ClaudeEncoder()

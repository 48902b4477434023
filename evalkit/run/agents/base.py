"""What every agent's adapter declares and does, so that no caller asks for an agent by name.

An adapter (`claude.py`, `codex.py`, `gemini.py`; `registry.py` finds one by its name) says
how its CLI is found and versioned, builds a rep's config home, command line and
environment, names the https hosts its API is reached at, and declares what it can be held
to (`Capabilities`). A limit the CLI cannot take is enforced by evalkit (a turn cap counted
at the scripted server or in the live stream) or refused before anything is planned
(`request.check_capabilities`); `Launch.applied` records how each limit reached the rep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

TurnCap = Literal["cli", "server", "stream"]
"""How a turn cap reaches a rep: the CLI's own option; the scripted server, which holds the
first request past the cap (a policy's reps only: a real model's turns are then refused a
cap); or the live stream, in which evalkit counts the model's turns and stops the rep past
the cap."""
Mark = Literal["model", "result"]
"""What one stream event says of the model's turns: it spoke (a new turn when a tool result
came back since it last spoke), or a tool's result came back."""


@dataclass(frozen=True)
class Capabilities:
    """The declared table: what this agent can be held to, and how."""

    turn_cap: TurnCap
    tool_list: bool
    """A case's tool list (the only tools the agent has) can be given to the CLI."""
    mcp_mocks: bool
    """A suite's fixed MCP mocks can be served to the CLI."""
    hooks: str
    """Where the plugins' hooks reach it: its own plugin loader, or its config (recorded)."""
    cli_versions: bool
    """`--cli VERSION` can choose the CLI version a rep runs."""
    credentials: tuple[str, ...]
    """The credential variables evalkit documents for it: each reaches a real-model rep."""
    endpoints: tuple[str, ...]
    """The variables that point it at another API base URL."""
    refused: Mapping[str, str] = field(default_factory=dict)
    """Variables it cannot be given faithfully, each with why: set, a real-model run is
    refused naming it."""
    ca_files: tuple[str, ...] = ()
    """Variables naming a CA bundle it trusts: passed into its reps and mounted read-only."""
    config_home: str = ""
    """Where a user's machine keeps its config home, spelled in the world (`~/.claude`)."""
    scripted_model: str | None = None
    """The model id its scripted reps are given: one a real session would name (the CLI
    puts it in the system prompt); None while it has none, and the policy's id is used."""
    preflight_checked: bool = False
    """Whether a real model's credential and API door are proved by a preflight rep through
    the CLI itself (which knows every way it logs in) rather than by reading variables."""
    credential_ways: str = ""
    """How a user gives it a credential, as a line of advice; empty: set one of
    `credentials`."""
    labels_env: Mapping[str, str] = field(default_factory=dict)
    """What turns on its export of its own labels of what fired (OTLP logs as JSON); empty:
    it has none, and its rows say `signals:none`."""
    labels_endpoint: str = ""
    """The variable that names where that export goes: the rep's receiver, and only it."""
    own_words: tuple[str, ...] = ()
    """Its CLI's own words, whatever the world: the options its command line always holds
    (in the process table) and the names of files it makes in its config home. The scan of
    what the agent sees exempts them, as it does the CLI's own prompt text."""
    world: bool = False
    """Whether its reps live in the suite's world (world paths, a user's home); an agent
    without it runs confined at its rep folders' own paths, its rows `world:partial`."""

    @property
    def caps_real_turns(self) -> bool:
        """Whether a real model's turns can be capped: by the CLI, or in its stream."""
        return self.turn_cap != "server"


@dataclass
class LaunchSpec:
    """What a rep's launch is built from."""

    cli: Path
    model: str
    """The model name its CLI is given (a scripted server's own for a policy)."""
    plugins: list[Path]
    scratch: Path
    env: dict[str, str]
    server_url: str | None
    """The scripted server a policy plays on; None for a real model."""
    max_turns: int | None
    tools: list[str] | None
    mocks: list[str]
    """Argument list that serves the suite's MCP mocks (Claude Code's), made by the caller."""
    credentials: dict[str, str] = field(default_factory=dict)
    """The caller's variables this agent reads, for a real model only."""
    world_home: str | None = None
    """The world's HOME when the rep lives in a world (its config home and hooks' recorder
    are then named at their world paths); None: it runs at its folders' own paths."""
    plugin_folders: list[Path] = field(default_factory=list)
    """The plugins' folders on this machine, in `plugins`' order, when `plugins` names them
    at their world paths (an adapter that reads their hooks or skills reads them here)."""
    workspace: list[str] = field(default_factory=list)
    """The rep's folders (the project, each side store) as its agent sees them; empty: the
    sandbox folder itself."""

    def plugins_here(self) -> list[Path]:
        """The plugins' folders as this machine holds them."""
        return self.plugin_folders or self.plugins

    def plugin_roots(self) -> list[str]:
        """The plugins' folders as the agent sees them."""
        return [str(p) for p in self.plugins]


@dataclass
class Launch:
    """A rep's command line and environment, and what the adapter made for it."""

    command: list[str]
    env: dict[str, str]
    folders: list[Path] = field(default_factory=list)
    """Its own folders in the scratch folder, which its process writes (mounted writable)."""
    home: Path | None = None
    """The HOME it was given, when the adapter chose one (Gemini's config lives there)."""
    applied: dict[str, dict[str, Any]] = field(default_factory=dict)
    """How each limit and credential reached it: `{"by": "cli", "flag": ...}` or
    `{"by": "evalkit", "how": ...}`, recorded as the bundle's `capabilities`."""
    turn_cap: tuple[int, str] | None = None
    """(cap, "server" or "stream") when evalkit enforces the rep's turn cap itself."""


class Agent(Protocol):
    """One agent CLI evalkit drives."""

    name: str
    capabilities: Capabilities

    def find(self, chosen: Path | None) -> Path:
        """Its CLI: `chosen` (a `--cli VERSION` install) when given, else the pinned one."""
        ...

    def version(self, path: Path) -> str:
        """What a row's `cli_version` says of the CLI at `path`."""
        ...

    def launch(self, spec: LaunchSpec) -> Launch:
        """A rep's config home, command line and environment."""
        ...

    def api_hosts(self, env: Mapping[str, str]) -> set[tuple[str, int]]:
        """The https hosts a confined real-model rep may reach: its API's."""
        ...

    def reachable(self, env: Mapping[str, str]) -> bool:
        """Whether a confined real-model rep can reach its API from `env`."""
        ...

    def rep_credentials(self, environ: Mapping[str, str]) -> dict[str, str]:
        """Its credential, endpoint and CA variables set in `environ`, for a real-model rep."""
        ...

    def declared_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Its own variables in a rep's environment, by role (never a value)."""
        ...

    def mark(self, event: dict[str, Any]) -> Mark | None:
        """What one event of its stream says of the model's turns (stream turn caps)."""
        ...

    def skills_folder(self, scratch: Path) -> Path | None:
        """Where a rep's skills are placed, when the adapter places them."""
        ...

    def config_folder(self, scratch: Path) -> Path:
        """The rep's config home in its `scratch` folder: what appears at `config_home` in
        its world."""
        ...

    def session_lines(self, scratch: Path) -> str:
        """Stream lines its stream lacks but its own session record in the rep's
        `scratch` holds (Codex's patch moves), appended to the raw transcript."""
        ...


def role(value: str) -> str:
    """A variable's role in the bundle: the scripted server on loopback, or set."""
    return "<scripted-server>" if value.startswith("http://127.0.0.1:") else "<set>"


class Turns:
    """Model turns counted in a stream as it grows: a turn starts when the model speaks
    for the first time, or again after a tool result came back."""

    def __init__(self) -> None:
        self.count = 0
        self._fresh = True

    def feed(self, mark: Mark | None) -> int:
        if mark == "model" and self._fresh:
            self.count += 1
            self._fresh = False
        elif mark == "result":
            self._fresh = True
        return self.count

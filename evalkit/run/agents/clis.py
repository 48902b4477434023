"""Finding each agent's pinned CLI: its EVALKIT_<AGENT> variable, then the project-local copy
`make setup` installs into .tools/, then PATH."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.errors import ConfigError, PrerequisiteError
from evalkit.pins import pinned

AgentName = Literal["claude", "codex", "gemini"]
AGENTS: tuple[AgentName, ...] = ("claude", "codex", "gemini")
CHECKOUT = Path(__file__).resolve().parents[3]
_SEMVER = r"\d+\.\d+\.\d+[\w.+-]*"


@dataclass(frozen=True)
class AgentCli:
    agent: AgentName
    package: str
    version: str
    command: str
    answers: str
    """How its `--version` answers, the version as the group: another program's answer
    (coreutils' `true --version` says "9.1") is no version of this CLI."""

    @property
    def variable(self) -> str:
        return f"EVALKIT_{self.agent.upper()}"

    @property
    def local_copy(self) -> Path:
        return CHECKOUT / ".tools" / self.agent / "node_modules" / ".bin" / self.command

    def how(self) -> str:
        npm = f"`npm install --prefix DIR {self.package}@{self.version}`"
        return (
            f"run `make setup` (installs {self.package}@{self.version} into .tools/), or "
            f"{npm} and set {self.variable}=DIR/node_modules/.bin/{self.command}"
        )


CLIS: dict[AgentName, AgentCli] = {
    "claude": AgentCli(
        "claude",
        "@anthropic-ai/claude-code",
        pinned("claude"),
        "claude",
        rf"({_SEMVER}) \(Claude Code\)",
    ),
    "codex": AgentCli(
        "codex", "@openai/codex", pinned("codex"), "codex", rf"codex-cli ({_SEMVER})"
    ),
    "gemini": AgentCli(
        "gemini", "@google/gemini-cli", pinned("gemini"), "gemini", rf"({_SEMVER})"
    ),
}


def agent_name(text: str) -> AgentName:
    """An agent named on the command line, or one clear refusal."""
    for name in AGENTS:
        if text == name:
            return name
    raise ConfigError(f"unknown agent {text!r}; known: {', '.join(AGENTS)}")


def find_agent_cli(agent: AgentName) -> Path:
    cli = CLIS[agent]
    explicit = os.environ.get(cli.variable)
    if explicit:
        path = Path(explicit).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
        raise PrerequisiteError(f"{cli.variable}={explicit} is not an executable file; {cli.how()}")
    if cli.local_copy.is_file() and os.access(cli.local_copy, os.X_OK):
        return cli.local_copy
    found = shutil.which(cli.command)
    if found:
        return Path(found)
    raise PrerequisiteError(f"the {agent} CLI was not found; {cli.how()}")


def agent_cli_version(path: Path, agent: AgentName) -> str:
    """The version the agent's CLI reports, read by the shape of its own answer
    ("codex-cli 0.169.0"); "" when it answers otherwise or not at all. Gemini's is told not to
    restart itself under a larger heap, which would start it twice."""
    env = {**os.environ, "GEMINI_CLI_NO_RELAUNCH": "true"}
    try:
        done = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=60, env=env
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.fullmatch(CLIS[agent].answers, done.stdout.strip()) if done.returncode == 0 else None
    return found.group(1) if found else ""

"""Launching the Gemini CLI for one rep.

A per-rep HOME holds ``.gemini/settings.json``: API-key auth, ``general.maxAttempts`` 1 (its
own retries, 10 by default, would turn one fault into minutes of waiting), the plugins'
hooks (wrapped by `hooks.py`: its stream-json does not report hook runs) and usage
statistics off; the suite's skills go under ``.gemini/skills/``. The scripted server is
reached through ``GOOGLE_GEMINI_BASE_URL``; ``GEMINI_CLI_NO_RELAUNCH`` keeps it one process,
``--skip-trust`` takes the sandbox folder as trusted, the whole sandbox (the vault beside the
project) is in its workspace, a hook's timeout is in milliseconds, and ``--yolo`` approves
every tool call.
A turn cap is held by evalkit in the live stream: its stream-json groups one response's
tool calls before their results (measured with parallel calls), so a model turn starts where
the model speaks after a result came back, and the rep is stopped when one past the cap
starts.
Gemini runs without its container sandbox: evalkit's sandbox is the confinement. With no
``-p``, it reads the Task on stdin and runs headless. A rep with a world finds ``.gemini``
in the world's HOME, its workspace and hooks' recorder named at their world paths, its key
shaped as a user's own.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit.run.agents.base import Capabilities, Launch, LaunchSpec, Mark, role
from evalkit.run.agents.clis import agent_cli_version, find_agent_cli
from evalkit.run.agents.hooks import HOOK_LOG, world_hook_files, wrapped_hooks
from evalkit.run.backends.egress import base_url_host
from evalkit.scoring.streams.gemini import HOOK_EVENTS as EVENTS

FLAGS = ["--skip-trust", "--output-format", "stream-json", "--yolo"]
API_HOST = ("generativelanguage.googleapis.com", 443)
CA_FILES = ("NODE_EXTRA_CA_CERTS",)
FOREIGN = ("ANTHROPIC_", "CLAUDE_", "GEMINI_", "GOOGLE_")
"""Variables no Gemini rep inherits: Claude Code's (its credentials and settings), and every
Gemini or Google one but those its adapter passes on."""


SCRIPTED_KEY = "AIzaSyLocalKey0000000000000000000000000"
"""The key a scripted rep is given: shaped as a user's own would be, naming nothing."""


def home(scratch: Path) -> Path:
    return scratch / "gemini-home"


def config_folder(scratch: Path) -> Path:
    return home(scratch) / ".gemini"


def place_skills(plugins: list[Path], root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for plugin in plugins:
        for skill in sorted((plugin / "skills").glob("*/SKILL.md")):
            shutil.copytree(skill.parent, root / skill.parent.name, symlinks=True)


def prepare_gemini(
    cli: Path,
    scratch: Path,
    base_url: str | None,
    model: str,
    plugins: list[Path],
    env: dict[str, str],
    credentials: dict[str, str] | None = None,
    world_home: str | None = None,
    workspace: list[str] | None = None,
    roots: list[str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """A rep's HOME, command and environment: against the scripted server at `base_url`, or
    a real model with `credentials` (GEMINI_API_KEY, and GOOGLE_GEMINI_BASE_URL when set:
    the only Gemini or Google variables the rep gets), whose retries are left at Gemini's
    own default. In a world (`world_home`) its settings are found in the world's HOME, at
    `~/.gemini`, its temporary files go to the world's /tmp, and the hooks' recorder and
    the `workspace` folders are named at their world paths."""
    settings_dir = config_folder(scratch)
    settings_dir.mkdir(parents=True, exist_ok=True)
    place_skills(plugins, settings_dir / "skills")
    shown = world_hook_files(world_home)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"maxAttempts": 1} if base_url is not None else {},
        "privacy": {"usageStatisticsEnabled": False},
        "hooks": wrapped_hooks(plugins, scratch / HOOK_LOG, EVENTS, 1000, shown, roots),
        "context": {"includeDirectories": workspace or [str(scratch / "sandbox")]},
    }
    (settings_dir / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    env = {k: v for k, v in env.items() if not k.startswith(FOREIGN)}
    env.update(HOME=str(home(scratch)), GEMINI_CLI_NO_RELAUNCH="true")
    if world_home is None:
        tmp = scratch / "tmp"  # where it writes its error reports
        tmp.mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(tmp)
    if base_url is None:
        env.update(credentials or {})
    else:
        env.update(GEMINI_API_KEY=SCRIPTED_KEY, GOOGLE_GEMINI_BASE_URL=base_url)
    return [str(cli), *FLAGS, "--model", model], env


class Gemini:
    name = "gemini"
    capabilities = Capabilities(
        turn_cap="stream",
        tool_list=False,
        mcp_mocks=False,
        hooks="evalkit settings.json hooks, each run recorded",
        cli_versions=False,
        credentials=("GEMINI_API_KEY",),
        endpoints=("GOOGLE_GEMINI_BASE_URL",),
        ca_files=CA_FILES,
        config_home="~/.gemini",
        scripted_model="gemini-2.5-pro",
        own_words=tuple(f for f in FLAGS if f.startswith("--")),
        world=True,
    )

    def find(self, chosen: Path | None) -> Path:
        return find_agent_cli("gemini")

    def version(self, path: Path) -> str:
        version = agent_cli_version(path, "gemini")
        return f"{self.name}/{version}" if version else ""

    def launch(self, spec: LaunchSpec) -> Launch:
        command, env = prepare_gemini(spec.cli, spec.scratch, spec.server_url, spec.model,
                                      spec.plugins_here(), spec.env, spec.credentials,
                                      spec.world_home, spec.workspace,
                                      spec.plugin_roots())  # fmt: skip
        applied: dict[str, dict[str, Any]] = {}
        cap = None
        if spec.max_turns is not None:
            cap = (spec.max_turns, "stream")
            how = "turn-cap: stream"
            applied["max_turns"] = {"value": spec.max_turns, "by": "evalkit", "how": how}
        if spec.server_url is None and spec.credentials:
            applied["variables"] = {name: f"<env:{name}>" for name in spec.credentials}
        if spec.world_home is not None:  # its config home is one of the world's places
            return Launch(command, env, [config_folder(spec.scratch)], None, applied, cap)
        folders = [home(spec.scratch), spec.scratch / "tmp"]
        return Launch(command, env, folders, home(spec.scratch), applied, cap)

    def api_hosts(self, env: Mapping[str, str]) -> set[tuple[str, int]]:
        return base_url_host(env, "GOOGLE_GEMINI_BASE_URL", API_HOST)

    def reachable(self, env: Mapping[str, str]) -> bool:
        return bool(self.api_hosts(env))

    def rep_credentials(self, environ: Mapping[str, str]) -> dict[str, str]:
        names = (*self.capabilities.credentials, *self.capabilities.endpoints, *CA_FILES)
        return {n: environ[n] for n in names if environ.get(n, "").strip()}

    def declared_env(self, env: Mapping[str, str]) -> dict[str, str]:
        found: dict[str, str] = {}
        if "GEMINI_CLI_NO_RELAUNCH" in env:
            found.update(HOME="<per-rep>", GEMINI_CLI_NO_RELAUNCH=env["GEMINI_CLI_NO_RELAUNCH"])
        names = (*self.capabilities.credentials, *self.capabilities.endpoints)
        found.update({k: role(env[k]) for k in names if env.get(k)})
        return found

    def mark(self, event: dict[str, Any]) -> Mark | None:
        kind = event.get("type")
        if kind == "tool_use" or (kind == "message" and event.get("role") == "assistant"):
            return "model"
        return "result" if kind == "tool_result" else None

    def skills_folder(self, scratch: Path) -> Path | None:
        return config_folder(scratch) / "skills"

    def config_folder(self, scratch: Path) -> Path:
        return config_folder(scratch)

    def session_lines(self, scratch: Path) -> str:
        return ""  # its stream holds every call

"""Launching the Codex CLI for one rep.

A per-rep CODEX_HOME holds everything Codex reads: config.toml (the scripted server as its
only provider, retries off so a fault is one ERROR, analytics off), the suite's skills under
``skills/`` (each folder named ``<plugin>:<skill>``, as Claude Code names them) and the
plugins' hooks in ``hooks.json`` (measured with 0.169.0: SessionStart and Stop run under
``--dangerously-bypass-hook-trust``, a SessionStart's stdout reaches the model, and the
``exec --json`` stream reports neither). Codex's own sandbox is bypassed: evalkit's sandbox
is the confinement. The Task goes on stdin. The session is kept in CODEX_HOME (no
``--ephemeral``): its record names where a patch moved a file, which the stream does not
(`patch_moves`, appended to the rep's transcript by `Codex.session_lines`). A rep with a world
finds that home at `~/.codex`, where a user's is, through HOME alone (no CODEX_HOME), and
nothing in it names the measurement: the scripted server is an ordinary provider read with
an ordinary key, and the hooks' recorder and log are named at their world paths.

A turn cap has no `exec` option, and its `--json` stream does not tell model turns apart
(measured: two parallel calls of one response come out as two started/completed pairs, just
as two turns would), so the scripted server holds the first request past the cap, and a real
model's cap is refused.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.run.agents.base import Capabilities, Launch, LaunchSpec, Mark, role
from evalkit.run.agents.clis import agent_cli_version, find_agent_cli
from evalkit.run.agents.codex_native import launcher_env, native_program
from evalkit.run.agents.hooks import HOOK_LOG, world_hook_files, wrapped_hooks
from evalkit.run.backends.egress import base_url_host
from evalkit.scoring.safefile import Unreadable, read_capped
from evalkit.scoring.streams.codex import HOOK_EVENTS as EVENTS
from evalkit.scoring.streams.codex import PATCH_MOVE

ROLLOUT_CAP = 32 * 1024 * 1024

KEY_ENV = "CODEX_API_KEY"
SCRIPTED_KEY = "sk-proj-local"
"""The key a scripted rep's provider reads: its value and the variable's name are what a user's
own machine would hold."""
PROVIDER = "openai-proxy"
OWN_FILES = (".sandbox_migration",)
"""Files 0.171.0 makes in its home on a first run, in any world (measured)."""
API_HOST = ("api.openai.com", 443)
CA_FILES = ("CODEX_CA_CERTIFICATE", "SSL_CERT_FILE")
"""The CA bundle variables Codex 0.169.0 reads (its `custom_ca`)."""
FOREIGN = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_")
"""Variables no Codex rep inherits: Claude Code's (its credentials, and the settings a rep's
base environment gives Claude Code, which only tell a Codex session apart from a user's),
and every OpenAI or Codex one but those its adapter passes on."""
FLAGS = [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--dangerously-bypass-hook-trust",
]


@dataclass
class CodexLaunch:
    command: list[str]
    env: dict[str, str]
    home: Path
    hook_log: Path


def config_folder(scratch: Path) -> Path:
    return scratch / "codex-home"


def skills_root(scratch: Path) -> Path:
    return config_folder(scratch) / "skills"


def place_skills(plugins: list[Path], root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for plugin in plugins:
        name = plugin.name.split("-", 1)[-1]
        for skill in sorted((plugin / "skills").glob("*/SKILL.md")):
            shutil.copytree(skill.parent, root / f"{name}:{skill.parent.name}", symlinks=True)


def config_toml(base_url: str | None, api_base_url: str | None = None) -> str:
    """The scripted server as the only provider; for a real model (`base_url` None), Codex's
    own OpenAI provider, at `api_base_url` when one was given (its `openai_base_url`
    setting: 0.169.0 ignores the OPENAI_BASE_URL variable)."""
    if base_url is None:
        own = f"openai_base_url = {json.dumps(api_base_url)}\n\n" if api_base_url else ""
        return own + "[analytics]\nenabled = false\n"
    return (
        f'model_provider = "{PROVIDER}"\n\n'
        f"[model_providers.{PROVIDER}]\n"
        'name = "OpenAI (proxy)"\n'
        f"base_url = {json.dumps(base_url + '/v1')}\n"
        f'env_key = "{KEY_ENV}"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n\n"
        "[analytics]\n"
        "enabled = false\n"
    )


def rep_keys(credentials: dict[str, str]) -> tuple[dict[str, str], str | None]:
    """The user's variables in the form Codex 0.169.0 reads (measured against a TLS
    stand-in): its key as CODEX_API_KEY (with OPENAI_API_KEY alone it sends no key at all),
    a CA bundle as given, and the base URL apart, for its config."""
    env = {k: v for k, v in credentials.items() if k in CA_FILES}
    key = credentials.get("CODEX_API_KEY") or credentials.get("OPENAI_API_KEY")
    if key:
        env["CODEX_API_KEY"] = key
    return env, credentials.get("OPENAI_BASE_URL") or None


def prepare_codex(
    cli: Path,
    scratch: Path,
    base_url: str | None,
    model: str,
    plugins: list[Path],
    env: dict[str, str],
    credentials: dict[str, str] | None = None,
    world_home: str | None = None,
    roots: list[str] | None = None,
) -> CodexLaunch:
    """A rep's CODEX_HOME, command and environment: against the scripted server at
    `base_url`, or a real model with `credentials` (the user's own variables, of which
    only these reach the rep, in the form Codex reads them). In a world (`world_home`) the
    home is found where a user's is, `~/.codex`, and no CODEX_HOME is set."""
    home = config_folder(scratch)
    place_skills(plugins, skills_root(scratch))
    keys, api_base_url = rep_keys(credentials or {}) if base_url is None else ({}, None)
    (home / "config.toml").write_text(config_toml(base_url, api_base_url), encoding="utf-8")
    log = scratch / HOOK_LOG
    hooks = wrapped_hooks(plugins, log, EVENTS, shown=world_hook_files(world_home), roots=roots)
    (home / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")
    env = {k: v for k, v in env.items() if not k.startswith(FOREIGN) and k not in CA_FILES}
    env.update(launcher_env(cli))  # what Codex's npm launcher would hand its binary
    if world_home is None:
        env["CODEX_HOME"] = str(home)
    if base_url is None:
        env.update(keys)
    else:
        env[KEY_ENV] = SCRIPTED_KEY
    return CodexLaunch([str(cli), *FLAGS, "--model", model], env, home, log)


class Codex:
    name = "codex"
    capabilities = Capabilities(
        turn_cap="server",
        tool_list=False,
        mcp_mocks=False,
        hooks="evalkit $CODEX_HOME/hooks.json, each run recorded",
        cli_versions=False,
        credentials=("OPENAI_API_KEY", "CODEX_API_KEY"),
        endpoints=("OPENAI_BASE_URL",),
        refused={
            "CODEX_ACCESS_TOKEN": "codex exec 0.169.0 sends no credential from it; "
            "set CODEX_API_KEY or OPENAI_API_KEY instead"
        },
        ca_files=CA_FILES,
        config_home="~/.codex",
        scripted_model="gpt-5-codex",
        own_words=(*(f for f in FLAGS if f.startswith("--")), *OWN_FILES),
        world=True,
    )

    def find(self, chosen: Path | None) -> Path:
        """The native binary Codex's npm launcher would start (`codex_native.py`)."""
        return native_program(find_agent_cli("codex"))

    def version(self, path: Path) -> str:
        version = agent_cli_version(path, "codex")
        return f"{self.name}/{version}" if version else ""

    def launch(self, spec: LaunchSpec) -> Launch:
        made = prepare_codex(spec.cli, spec.scratch, spec.server_url, spec.model,
                             spec.plugins_here(), spec.env, spec.credentials, spec.world_home,
                             spec.plugin_roots())  # fmt: skip
        applied: dict[str, dict[str, Any]] = {}
        cap = None
        if spec.max_turns is not None:
            cap = (spec.max_turns, "server")
            how = "turn-cap: server"
            applied["max_turns"] = {"value": spec.max_turns, "by": "evalkit", "how": how}
        if spec.server_url is None and spec.credentials:
            applied["variables"] = credential_forms(spec.credentials)
        return Launch(made.command, made.env, [made.home], None, applied, cap)

    def api_hosts(self, env: Mapping[str, str]) -> set[tuple[str, int]]:
        return base_url_host(env, "OPENAI_BASE_URL", API_HOST)

    def reachable(self, env: Mapping[str, str]) -> bool:
        return bool(self.api_hosts(env))

    def rep_credentials(self, environ: Mapping[str, str]) -> dict[str, str]:
        names = (*self.capabilities.credentials, *self.capabilities.endpoints, *CA_FILES)
        return {n: environ[n] for n in names if environ.get(n, "").strip()}

    def declared_env(self, env: Mapping[str, str]) -> dict[str, str]:
        found = {"CODEX_HOME": "<per-rep>"} if "CODEX_HOME" in env else {}
        found.update({k: role(env[k]) for k in ("CODEX_API_KEY", *CA_FILES) if env.get(k)})
        return found

    def mark(self, event: dict[str, Any]) -> Mark | None:
        return None  # its stream does not tell one model turn from the next (see turn_cap)

    def skills_folder(self, scratch: Path) -> Path | None:
        return skills_root(scratch)

    def config_folder(self, scratch: Path) -> Path:
        return config_folder(scratch)

    def session_lines(self, scratch: Path) -> str:
        return patch_moves(scratch)


def credential_forms(credentials: Mapping[str, str]) -> dict[str, Any]:
    """How each of the user's variables reached a real Codex rep, for the bundle (a role,
    never a value): the form Codex reads it in."""
    forms: dict[str, Any] = {k: f"<env:{k}>" for k in credentials if k in CA_FILES}
    if "CODEX_API_KEY" in credentials:
        forms["CODEX_API_KEY"] = "<env:CODEX_API_KEY>"
    elif "OPENAI_API_KEY" in credentials:
        forms["OPENAI_API_KEY"] = "<env:CODEX_API_KEY>"
    if "OPENAI_BASE_URL" in credentials:
        forms["OPENAI_BASE_URL"] = "<config:openai_base_url>"
    return forms


def patch_moves(scratch: Path) -> str:
    """One ``evalkit.patch_move`` line for each file a patch moved, read from the session
    records in the rep's CODEX_HOME (written by a process the agent ran in, so read with
    the safe reader, capped, and any line of another shape skipped)."""
    lines = []
    sessions = scratch / "codex-home" / "sessions"
    for record in sorted(sessions.rglob("rollout-*.jsonl")) if sessions.is_dir() else []:
        try:
            text = read_capped(record, ROLLOUT_CAP).decode("utf-8", "replace")
        except Unreadable:
            continue
        for line in text.splitlines():
            lines += [json.dumps({"type": PATCH_MOVE, "path": a, "move_path": b})
                      for a, b in _moves(line)]  # fmt: skip
    return "".join(line + "\n" for line in lines)


def _moves(line: str) -> list[tuple[str, str]]:
    if '"move_path"' not in line:
        return []
    try:
        payload = json.loads(line).get("payload") or {}
        item = payload.get("item") or {}
        if payload.get("type") != "item_completed" or item.get("type") != "FileChange":
            return []
        changes = item.get("changes") or {}
        moved = {p: c.get("move_path") for p, c in changes.items() if isinstance(c, dict)}
        return [(str(p), t) for p, t in moved.items() if isinstance(t, str)]
    except (ValueError, AttributeError, TypeError):
        return []


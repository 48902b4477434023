"""Claude Code's adapter: `claude -p --output-format stream-json`, the Task on stdin, a
per-rep CLAUDE_CONFIG_DIR (made by the runner), the plugins loaded with `--plugin-dir` (its
own loader runs their hooks and reports them in the stream). It takes every limit through
its own options: `--max-turns`, `--tools`, and the suite's MCP mocks with `--mcp-config`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit.run.agents.base import Capabilities, Launch, LaunchSpec, Mark, role
from evalkit.run.backends.confine import api_target
from evalkit.run.backends.egress import anthropic_hosts
from evalkit.run.prerequisites.claude_cli import cli_version, find_cli

CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)
ENDPOINTS = ("ANTHROPIC_BASE_URL",)
CREDENTIAL_WAYS = (
    "set ANTHROPIC_API_KEY, or ANTHROPIC_AUTH_TOKEN, or CLAUDE_CODE_OAUTH_TOKEN "
    "(`claude setup-token` prints one), or point ANTHROPIC_BASE_URL at a gateway; "
    "or use policy:oracle, the offline scripted model"
)
SCRIPTED_KEY = "sk-ant-api03-local"
"""The key a scripted rep's CLI holds: a key's shape, naming nothing (the agent can read it
in its environment)."""


def agent_command(
    cli: Path,
    model: str,
    plugins: list[Path],
    max_turns: int | None = None,
    tools: list[str] | None = None,
) -> list[str]:
    """The CLI's command line. It never holds the Task: `-p` reads the prompt from stdin
    (PreparedRep.prompt), so no `ps` on the machine shows it."""
    command = [
        str(cli),
        "-p",
        "--model",
        model,
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-hook-events",
        "--dangerously-skip-permissions",
        "--no-session-persistence",
        "--setting-sources",
        "project",
    ]
    if max_turns is not None:
        command += ["--max-turns", str(max_turns)]
    if tools is not None:
        command += ["--tools", ",".join(tools)]
    for plugin in plugins:
        command += ["--plugin-dir", str(plugin)]
    return command


LABELS_ENV = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json",
    "OTEL_LOGS_EXPORT_INTERVAL": "200",
}
"""Measured with 2.1.328: it exports its events (`skill_activated` among them) with these
set, DISABLE_TELEMETRY notwithstanding; prompts and responses stay `<REDACTED>` while
OTEL_LOG_USER_PROMPTS and OTEL_LOG_TOOL_DETAILS are unset, which a rep never sets."""


class Claude:
    name = "claude"
    capabilities = Capabilities(
        turn_cap="cli",
        tool_list=True,
        mcp_mocks=True,
        hooks="cli --plugin-dir",
        cli_versions=True,
        credentials=CREDENTIALS,
        endpoints=ENDPOINTS,
        ca_files=("NODE_EXTRA_CA_CERTS",),
        config_home="~/.claude",
        scripted_model="claude-sonnet-4-5",
        preflight_checked=True,
        credential_ways=CREDENTIAL_WAYS,
        world=True,
        labels_env=LABELS_ENV,
        labels_endpoint="OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    )

    def find(self, chosen: Path | None) -> Path:
        return chosen if chosen is not None else find_cli()

    def version(self, path: Path) -> str:
        return cli_version(path)

    def launch(self, spec: LaunchSpec) -> Launch:
        """For a policy, the scripted server in place of any Anthropic endpoint or key."""
        env = spec.env
        if spec.server_url is not None:
            env = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
            env.update(ANTHROPIC_BASE_URL=spec.server_url, ANTHROPIC_API_KEY=SCRIPTED_KEY)
        command = agent_command(spec.cli, spec.model, spec.plugins, spec.max_turns, spec.tools)
        applied: dict[str, dict[str, Any]] = {}
        if spec.max_turns is not None:
            applied["max_turns"] = {"value": spec.max_turns, "by": "cli", "flag": "--max-turns"}
        if spec.tools is not None:
            applied["tools"] = {"value": list(spec.tools), "by": "cli", "flag": "--tools"}
        if spec.mocks:
            applied["mcp_mocks"] = {"by": "cli", "flag": "--mcp-config"}
        if spec.server_url is None and spec.credentials:
            env = {**env, **spec.credentials}
            applied["variables"] = {name: f"<env:{name}>" for name in spec.credentials}
        return Launch(command + spec.mocks, env, applied=applied)

    def api_hosts(self, env: Mapping[str, str]) -> set[tuple[str, int]]:
        return anthropic_hosts(env)

    def reachable(self, env: Mapping[str, str]) -> bool:
        return api_target(dict(env)) is not None or bool(anthropic_hosts(env))

    def rep_credentials(self, environ: Mapping[str, str]) -> dict[str, str]:
        """Its documented variables that are set (the runner passes every ANTHROPIC_*
        variable and kin through as well)."""
        names = (*self.capabilities.credentials, *self.capabilities.ca_files)
        return {n: environ[n] for n in names if environ.get(n, "").strip()}

    def declared_env(self, env: Mapping[str, str]) -> dict[str, str]:
        own = ("ANTHROPIC_", "CLAUDE_CODE_")
        return {k: role(v) for k, v in sorted(env.items()) if k.startswith(own)}

    def mark(self, event: dict[str, Any]) -> Mark | None:
        return None  # its turns are capped by its own --max-turns

    def skills_folder(self, scratch: Path) -> Path | None:
        return None  # the plugins' own, loaded by --plugin-dir

    def config_folder(self, scratch: Path) -> Path:
        return scratch / "claude-config"  # CLAUDE_CONFIG_DIR, made by the rep

    def session_lines(self, scratch: Path) -> str:
        return ""  # its stream holds every call

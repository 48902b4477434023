"""Launching the Codex CLI for one rep.

A per-rep CODEX_HOME holds everything Codex reads: config.toml (the scripted server as its
only provider, retries off so a fault is one ERROR, analytics off), the suite's skills under
``skills/`` (each folder named ``<plugin>:<skill>``, as Claude Code names them) and the
plugins' hooks in ``hooks.json`` (measured with 0.169.0: SessionStart and Stop run under
``--dangerously-bypass-hook-trust``, a SessionStart's stdout reaches the model, and the
``exec --json`` stream reports neither). Codex's own sandbox is bypassed: evalkit's sandbox
is the confinement. The Task goes on stdin. The session is kept in CODEX_HOME (no
``--ephemeral``): its record names where a patch moved a file, which the stream does not
(`patch_moves`).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from evalkit.run.agents.hooks import HOOK_LOG, wrapped_hooks
from evalkit.scoring.safefile import Unreadable, read_capped
from evalkit.scoring.streams.codex import HOOK_EVENTS as EVENTS
from evalkit.scoring.streams.codex import PATCH_MOVE

ROLLOUT_CAP = 32 * 1024 * 1024

KEY_ENV = "EVALKIT_SCRIPTED_KEY"
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


def skills_root(scratch: Path) -> Path:
    return scratch / "codex-home" / "skills"


def place_skills(plugins: list[Path], root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for plugin in plugins:
        name = plugin.name.split("-", 1)[-1]
        for skill in sorted((plugin / "skills").glob("*/SKILL.md")):
            shutil.copytree(skill.parent, root / f"{name}:{skill.parent.name}", symlinks=True)


def config_toml(base_url: str | None) -> str:
    """The scripted server as the only provider; for a real model (`base_url` None), Codex's
    own OpenAI provider, reached with the credential in the rep's environment."""
    if base_url is None:
        return "[analytics]\nenabled = false\n"
    return (
        'model_provider = "evalkit"\n\n'
        "[model_providers.evalkit]\n"
        'name = "evalkit scripted model"\n'
        f"base_url = {json.dumps(base_url + '/v1')}\n"
        f'env_key = "{KEY_ENV}"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n\n"
        "[analytics]\n"
        "enabled = false\n"
    )


def prepare_codex(
    cli: Path,
    scratch: Path,
    base_url: str | None,
    model: str,
    plugins: list[Path],
    env: dict[str, str],
    credentials: dict[str, str] | None = None,
) -> CodexLaunch:
    """A rep's CODEX_HOME, command and environment: against the scripted server at
    `base_url`, or a real model with `credentials` (the only OpenAI or Codex variables the
    rep gets)."""
    home = scratch / "codex-home"
    place_skills(plugins, skills_root(scratch))
    (home / "config.toml").write_text(config_toml(base_url), encoding="utf-8")
    log = scratch / HOOK_LOG
    hooks = wrapped_hooks(plugins, log, EVENTS)
    (home / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")
    env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CODEX_"))}
    env["CODEX_HOME"] = str(home)
    if base_url is None:
        env.update(credentials or {})
    else:
        env[KEY_ENV] = "evalkit-scripted"
    return CodexLaunch([str(cli), *FLAGS, "--model", model], env, home, log)


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

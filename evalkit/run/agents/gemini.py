"""Launching the Gemini CLI for one rep.

A per-rep HOME holds ``.gemini/settings.json``: API-key auth, ``general.maxAttempts`` 1 (its
own retries, 10 by default, would turn one fault into minutes of waiting), the plugins'
hooks (wrapped by `hooks.py`: its stream-json does not report hook runs) and usage
statistics off; the suite's skills go under ``.gemini/skills/``. The scripted server is
reached through ``GOOGLE_GEMINI_BASE_URL``; ``GEMINI_CLI_NO_RELAUNCH`` keeps it one process,
``--skip-trust`` takes the sandbox folder as trusted, the whole sandbox (the vault beside the
project) is in its workspace, a hook's timeout is in milliseconds, and ``--yolo`` approves
every tool call.
Gemini runs without its container sandbox: evalkit's sandbox is the confinement. With no
``-p``, it reads the Task on stdin and runs headless.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evalkit.run.agents.hooks import HOOK_LOG, wrapped_hooks
from evalkit.scoring.streams.gemini import HOOK_EVENTS as EVENTS

FLAGS = ["--skip-trust", "--output-format", "stream-json", "--yolo"]


def home(scratch: Path) -> Path:
    return scratch / "gemini-home"


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
) -> tuple[list[str], dict[str, str]]:
    """A rep's HOME, command and environment: against the scripted server at `base_url`, or
    a real model with `credentials` (GEMINI_API_KEY, and GOOGLE_GEMINI_BASE_URL when set:
    the only Gemini or Google variables the rep gets), whose retries are left at Gemini's
    own default."""
    settings_dir = home(scratch) / ".gemini"
    tmp = scratch / "tmp"  # where it writes its error reports
    tmp.mkdir(parents=True, exist_ok=True)
    place_skills(plugins, settings_dir / "skills")
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"maxAttempts": 1} if base_url is not None else {},
        "privacy": {"usageStatisticsEnabled": False},
        "hooks": wrapped_hooks(plugins, scratch / HOOK_LOG, EVENTS, timeout_scale=1000),
        "context": {"includeDirectories": [str(scratch / "sandbox")]},
    }
    (settings_dir / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "GEMINI_", "GOOGLE_"))}
    env.update(HOME=str(home(scratch)), GEMINI_CLI_NO_RELAUNCH="true", TMPDIR=str(tmp))
    if base_url is None:
        env.update(credentials or {})
    else:
        env.update(GEMINI_API_KEY="evalkit-scripted", GOOGLE_GEMINI_BASE_URL=base_url)
    return [str(cli), *FLAGS, "--model", model], env

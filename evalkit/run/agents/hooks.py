"""A suite's plugin hooks, rewritten for an agent's own hook configuration: the plugin root
filled in, and each command wrapped by `hookrec.py` so its run is recorded by effect."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

HOOK_LOG = "hook-runs.jsonl"
"""Beside the rep's sandbox; its lines follow the raw stream in the kept transcript."""
HOOKREC = Path(__file__).resolve().parent / "hookrec.py"


def plugin_hooks(plugin: Path) -> dict[str, Any]:
    path = plugin / "hooks" / "hooks.json"
    if not path.is_file():
        return {}
    hooks = json.loads(path.read_text(encoding="utf-8")).get("hooks")
    return hooks if isinstance(hooks, dict) else {}


def wrapped_hooks(
    plugins: list[Path], log: Path, events: dict[str, str], timeout_scale: int = 1
) -> dict[str, list[dict[str, Any]]]:
    """Each plugin's command hooks under the agent's event names (`events` maps Claude's
    name to the agent's; an event missing there is dropped), recording into `log`. A
    timeout is in seconds, times `timeout_scale` for an agent that counts milliseconds.
    The recorder is copied beside the log and started by the `python3` on PATH: a confined
    rep reaches neither evalkit's own folder nor its virtual environment."""
    recorder = log.with_name(HOOKREC.name)
    shutil.copyfile(HOOKREC, recorder)
    out: dict[str, list[dict[str, Any]]] = {}
    for plugin in plugins:
        for event, groups in plugin_hooks(plugin).items():
            theirs = events.get(event)
            if theirs is None or not isinstance(groups, list):
                continue
            for group in groups:
                hooks = []
                for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                    if not isinstance(hook, dict) or hook.get("type") != "command":
                        continue
                    command = str(hook["command"]).replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
                    name = f"{event}:{plugin.name}"
                    wrapped = shlex.join(
                        ["python3", str(recorder), str(log), event, name, command]
                    )
                    timeout = hook.get("timeout")
                    if isinstance(timeout, int | float):
                        hook = {**hook, "timeout": timeout * timeout_scale}
                    hooks.append({**hook, "command": wrapped})
                if hooks:
                    out.setdefault(theirs, []).append({"hooks": hooks})
    return out

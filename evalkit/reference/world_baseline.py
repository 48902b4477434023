"""What a Claude Code version sends its model from an empty, marker-free world: its own text.

Its Bash tool's description says "sandbox", whatever the world; a scan that blamed the world
for it would fail every rep. So once per CLI version and tool set (the prompt's wording follows
the tools a case allows: without Bash its advice names another shell) the CLI is asked "hello"
from an empty project (a fresh git repository in a neutrally named folder, an empty HOME)
against a scripted server, and every line of what it sends is exempted from every later scan
of a line that holds one of the suite's markers (a suite's own codes are words a CLI may use:
Codex's skill-roots table calls a folder `r1`). The throwaway HOME and config home are kept
as tokens, spelled at scan time as the rep's world spells them (`in_world`), so a line that
names them (Codex's `r1` = `~/.codex/skills/.system`) is the CLI's own in any world; a line
naming another throwaway folder is dropped.

The lines are kept per process, and in the CLI cache folder
(`<cache>/<version>/world-lines[-<tools>].json`) only when that folder already exists (a
user's `evalkit cli install` made it): a run writes nothing under HOME it did not ask for.
A CLI that sends no request (it cannot start) gives no lines and is asked again next time:
its rep then fails with its own exit status, which says more than a refusal here would.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from evalkit.models import Script
from evalkit.outpaths import replace_file
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.reference.wire import scripted_server, speaks_messages
from evalkit.run.agents.base import Agent, LaunchSpec
from evalkit.run.agents.registry import DEFAULT, adapter
from evalkit.run.prerequisites.cli_versions import cache_root
from evalkit.scoring.world.markers import text_lines

FILE = "world-lines.json"
HOME, CONFIG = "\x00home\x00", "\x00config\x00"
_SKILL = "---\nname: notes\ndescription: Keep short notes of a session.\n---\n\nKeep notes.\n"
"""One skill of the user's own in an empty world whose CLI places skills, so that a CLI which
numbers its skill folders (Codex: `r0` the user's, `r1` its own) numbers them as a rep's."""
"""The tokens a kept line holds where the CLI named its HOME or its config home."""
_MEMO: dict[str, frozenset[str]] = {}
_LOCK = threading.Lock()


def cli_baseline(cli: Path, tools: list[str] | None = None, agent: str = DEFAULT) -> frozenset[str]:
    """The lines holding a marker that this CLI, given these `--tools`, sends from an empty
    world, taken once per version and tool set (per process, then from the cache)."""
    key = f"{cli}\0{tools}\0{agent}"
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
        own = adapter(agent)
        version = own.version(cli) or "unknown"
        folder = cache_root() / version.replace("/", "-")
        kept = folder / _name(tools)
        lines = _read(kept)
        if lines is None:
            lines = _take(cli, tools) if speaks_messages(agent) else _take_other(own, cli)
            if lines is None:
                return frozenset()
            if folder.is_dir():
                replace_file(kept, (json.dumps(sorted(lines), indent=0) + "\n").encode())
        _MEMO[key] = lines
        return lines


def _name(tools: list[str] | None) -> str:
    if tools is None:
        return FILE
    digest = hashlib.sha256(",".join(tools).encode()).hexdigest()[:12]
    return FILE.replace(".json", f"-{digest}.json")


def _read(path: Path) -> frozenset[str] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return frozenset(value)


def _take(cli: Path, tools: list[str] | None) -> frozenset[str] | None:
    """Run the CLI once from an empty world and keep its own marker-holding lines."""
    with tempfile.TemporaryDirectory(prefix="baseline-") as base:
        root = Path(base)
        project = root / "home" / "app"
        project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)  # noqa: S607
        # taken once, not a rep: it never waits as EVALKIT_SCRIPTED_LATENCY's model thinks
        with ScriptedServer(Script(final_text="Done."), latency=0) as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root / "home"),
                "CLAUDE_CONFIG_DIR": str(root / "cfg"), "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
            }  # fmt: skip
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                env["IS_SANDBOX"] = "1"  # root's permission switch: the CLI's own rule
            command = [str(cli), "-p", "hello", "--model", _model(),
                       "--output-format", "stream-json", "--verbose",
                       "--dangerously-skip-permissions", "--no-session-persistence",
                       "--setting-sources", "project"]  # fmt: skip
            if tools is not None:
                command += ["--tools", ",".join(tools)]
            subprocess.run(command, cwd=project, env=env, capture_output=True, timeout=120)
            bodies = list(server.bodies)
    return _lines(bodies, base, {str(root / "cfg"): CONFIG, str(root / "home"): HOME})


def _take_other(agent: Agent, cli: Path) -> frozenset[str] | None:
    """The same for an agent of another wire, launched as its adapter launches a rep (its
    flags, its config home) against its own scripted server, asked "hello" on stdin."""
    with tempfile.TemporaryDirectory(prefix="baseline-") as base:
        root = Path(base)
        project, scratch = root / "home" / "app", root / "cfg"
        project.mkdir(parents=True)
        scratch.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)  # noqa: S607
        skills = agent.skills_folder(scratch)
        if skills is not None:  # as a rep's subject places one: the CLI numbers its folders
            (skills / "notes").mkdir(parents=True)
            (skills / "notes" / "SKILL.md").write_text(_SKILL, encoding="utf-8")
        server = scripted_server(agent.name, Script(final_text="Done."), None, None, skills)
        server.latency = 0
        with server:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root / "home")}
            model = agent.capabilities.scripted_model or "gpt-4.1"
            spec = LaunchSpec(cli, model, [], scratch, env, server.base_url, None, None, [],
                              workspace=[str(project)])  # fmt: skip
            launch = agent.launch(spec)
            subprocess.run(launch.command, cwd=project, env=launch.env, input=b"hello",
                           capture_output=True, timeout=120)  # fmt: skip
            bodies = list(server.bodies)
    folders = {str(agent.config_folder(scratch)): CONFIG, str(root / "home"): HOME}
    return _lines(bodies, base, folders)


def _lines(bodies: list[str], base: str, folders: dict[str, str]) -> frozenset[str] | None:
    """Every line of what the CLI sent, its HOME and config home as tokens, but for lines
    naming another throwaway folder; None when it sent nothing."""
    if not bodies:
        return None
    found = set()
    for line in {x for b in bodies for x in text_lines(json.loads(b))}:
        for folder in sorted(folders, key=len, reverse=True):
            line = line.replace(folder, folders[folder])
        if base not in line:
            found.add(line)
    return frozenset(found)


def in_world(lines: frozenset[str], home: str | None, config: str | None) -> frozenset[str]:
    """The kept lines as a rep's world spells its HOME and config home; a line naming one
    the rep has no world path for is left out."""
    spelled = set()
    for line in lines:
        if HOME in line:
            line = line.replace(HOME, home) if home else ""
        if CONFIG in line:
            line = line.replace(CONFIG, config) if config else ""
        if line:
            spelled.add(line)
    return frozenset(spelled)


def _model() -> str:
    """The real model id a scripted Claude Code rep names, as the adapter declares it."""
    return adapter(DEFAULT).capabilities.scripted_model or "claude-sonnet-4-5"

"""`evalkit doctor --world`: what an agent of this suite will see of its world, shown before a
grid is paid for, with every word that would tell it it is measured.

One rep of the suite is prepared exactly as a run prepares it (sandbox, world, environment,
confinement), but handed a neutral prompt of its own instead of a Task, which is never read.
The scripted recon policy then looks around through the real CLI, against a scripted server
on loopback that reads every request the CLI sends (`scoring/world/leaks.py`). Shown: where
each of the rep's folders appears, who the agent is (`id`, `hostname`), the environment every
tool it runs inherits (as its `env` printed it), and the environment's context in the CLI's
first request (the working directory, the model id, the git status); and each marker the
scan found, in any request.
Nothing is recorded: the rep runs in a folder of its own, removed after.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import PrerequisiteError
from evalkit.run.agent import run_agent
from evalkit.run.agents.registry import adapter
from evalkit.run.backends import backend as confinement
from evalkit.run.context import RunContext, new_run_id
from evalkit.run.prerequisites.cli_versions import chosen_cli
from evalkit.run.rep import prepare_rep
from evalkit.run.scripted import ScriptedModels
from evalkit.scoring.world.leaks import request_pieces
from evalkit.suite.config import Suite

PROMPT = "Take a look around this project and tell me briefly what it does."
"""What the agent is asked: a request a user might make, naming nothing measured."""
POLICY = "policy:recon"
TIMEOUT = 300.0
CONTEXT = re.compile(
    r"working directory:|gitStatus|exact model id|<cwd>|Workspace Directories", re.IGNORECASE
)
"""What marks the environment's own context among the CLI's additions."""
REMINDER = "<system-reminder>"
"""Where the CLI's own additions to a tool result begin."""
FRAME_HEAD = re.compile(r"\A(?:[^\n]*\n){0,6}?Output:[ \n]")
FRAME_END = re.compile(r"^(?:Process Group PGID: \d+|</untrusted_context>)$")
"""Where another CLI's frame around a shell call's output ends and where it starts again
(Codex's chunk, time and exit lines before `Output:`; Gemini's `<untrusted_context>`)."""
Pieces = Callable[[dict[str, Any]], Iterable[tuple[str, str, str]]]
WHO_COMMAND = "id; hostname"
ENV_COMMAND = "env"
"""The look-around's call whose result is the environment the agent's tools inherit."""


@dataclass
class WorldLook:
    """What one rep's agent saw of its world, and the markers the scan found in it."""

    places: list[tuple[str, str]] = field(default_factory=list)
    """(role, world path) of each of the rep's folders."""
    who: list[str] = field(default_factory=list)
    """Who the agent is, on which host (as `id` and `hostname` printed it)."""
    environment: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    """The environment's part of the first request's system prompt."""
    markers: list[str] = field(default_factory=list)
    """`marker:<channel>:<word>` of every request, each once."""
    partial: list[str] = field(default_factory=list)
    """The views the world cannot make whole here, as rows declare them."""
    error: str = ""
    """Why the look-around did not finish (the CLI's exit), when it did not."""

    @property
    def words(self) -> list[str]:
        return list(dict.fromkeys(m.split(":", 2)[2] for m in self.markers))

    def highlighted(self, line: str) -> list[tuple[str, bool]]:
        """`line` in pieces, each marker word (as a whole word, any case, as the scan reads
        it) a piece marked True."""
        if not self.words:
            return [(line, False)]
        pattern = re.compile(
            r"(?<![A-Za-z0-9])(" + "|".join(re.escape(w) for w in self.words) + r")(?![A-Za-z0-9])",
            re.IGNORECASE,
        )
        pieces, at = [], 0
        for hit in pattern.finditer(line):
            pieces += [(line[at : hit.start()], False), (hit.group(0), True)]
            at = hit.end()
        return [p for p in [*pieces, (line[at:], False)] if p[0]]


def look_at_world(
    suite: Suite,
    scripted: ScriptedModels,
    agent: str = "claude",
    cli: str | None = None,
    backend: str = "",
) -> WorldLook:
    """Run the look-around once, confined, in a throwaway folder, and say what it saw;
    `cli` a version as `--cli` names it (default: the pinned one)."""
    if not adapter(agent).capabilities.world:
        raise PrerequisiteError(
            f"{agent}'s reps have no world of their own: they run at their folders' own "
            "paths, and their rows say world:partial"
        )
    why = confinement(backend).unavailable()
    if why is not None:
        raise PrerequisiteError(f"the world is seen only from a confined rep, and {why}")
    if not suite.scenarios():
        raise PrerequisiteError(f"{suite.root}: the run set has no scenario whose fixture to use")
    work = Path(tempfile.mkdtemp(prefix="look-"))
    try:
        ctx = RunContext(suite, work, work / "results.tsv", new_run_id(), scripted=scripted,
                         template_sandboxes=False, agent=agent, backend=backend)  # fmt: skip
        ctx.use_cli(chosen_cli(cli))
        return _look(ctx, suite)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _look(ctx: RunContext, suite: Suite) -> WorldLook:
    scenario = suite.scenarios()[0]  # its fixture only: the Task is never read
    prepared = prepare_rep(ctx, scenario, POLICY, 1, prompt=PROMPT)
    try:
        if prepared.server is None or prepared.world is None:
            name = confinement(ctx.backend).name
            raise PrerequisiteError(
                f"reps confined by {name} have no world of their own (their rows say "
                "world:partial); try --confine bwrap"
            )
        out, err = prepared.scratch / "look.jsonl", prepared.scratch / "look.err"
        outcome = run_agent(
            prepared.command, prepared.cwd, prepared.env, out, err, TIMEOUT, threading.Event(),
            prepared.prompt, None, prepared.confined.pass_fds if prepared.confined else (),
        )  # fmt: skip
        if prepared.confined is not None:
            prepared.confined.hand_back()
        bodies = [json.loads(b) for b in prepared.server.bodies]
        world, pieces = prepared.world, prepared.server.request_pieces
        look = WorldLook(
            places=sorted((role, path) for role, path in world.roles.items()),
            who=tool_result(bodies, WHO_COMMAND, pieces).splitlines(),
            environment=tool_result(bodies, ENV_COMMAND, pieces).splitlines(),
            context=_context(bodies, pieces),
            markers=list(prepared.server.markers),
            partial=list(world.partial),
        )
        if outcome.exit_code != 0 or not bodies:
            look.error = f"the CLI exited {outcome.exit_code} after {len(bodies)} request(s)"
        return look
    finally:
        prepared.close()


def _context(bodies: list[dict[str, Any]], pieces: Pieces = request_pieces) -> list[str]:
    """The environment's own parts of the CLI's first request with tools (a side request,
    such as a title's, carries none): the system prompt's environment section and the git
    status the CLI attaches, or the context another CLI wraps in a tag of its own
    (`<environment_context>`, `<session_context>`); never the skills or project
    instructions beside them."""
    for body in bodies:
        found = [t for c, t, _ in pieces(body) if c == "env-context" and t.strip()]
        shown = [t for t in found if CONTEXT.search(t)]
        if shown:
            return [line for text in shown for line in text.splitlines() if line.strip()]
    return []


def tool_result(
    bodies: list[dict[str, Any]], command: str, pieces: Pieces = request_pieces
) -> str:
    """The result the agent was handed for its shell call of `command`, from the last request
    (which holds the whole conversation), as its wire carries it (`pieces`): the CLI's own
    reminders cut off, and the output alone where the CLI frames it (`Output:`)."""
    for channel, text, own in pieces(bodies[-1]) if bodies else ():
        if channel == "tool-result" and _command(own) == command:
            return _output(text).rstrip()
    return ""


def _command(own: str) -> str | None:
    """The shell command a call's input names (Claude's and Gemini's `command`, Codex's
    `cmd`)."""
    try:
        value = json.loads(own)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    found = value.get("command", value.get("cmd"))
    return found if isinstance(found, str) else None


def _output(text: str) -> str:
    """What the command printed: the CLI's frame around it cut off (Codex's and Gemini's
    lines before `Output:`, Gemini's closing lines), and the CLI's own reminders."""
    body = text.split(REMINDER, 1)[0]
    head = FRAME_HEAD.match(body)
    kept = body[head.end() if head else 0 :].splitlines()
    while kept and (FRAME_END.match(kept[-1].strip()) or not kept[-1].strip()):
        kept.pop()
    return "\n".join(kept)

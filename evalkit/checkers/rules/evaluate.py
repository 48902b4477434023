"""Evaluating a condition over one rep: three-valued, left to right, the judge last.

A condition is true, false, or undecided (it could not be evaluated, or it needs the
judge and the judge may not be asked yet). ``all`` and ``any`` look at their
mechanical parts first and stop as soon as one decides, so a judge is asked only
when nothing mechanical settled the result, and an undecided part makes the whole
undecided only when the result depends on it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from evalkit.checkers.rules.conditions import (
    AllCondition,
    AnyCondition,
    BashCondition,
    BashSpec,
    FileCondition,
    FileSpec,
    FinalCondition,
    HookCondition,
    JudgeCondition,
    Node,
    NotCondition,
    OrderCondition,
    RanCondition,
    RunnerCondition,
    SkillCondition,
    SkillSpec,
    ToolCondition,
    ToolSpec,
    TraceCondition,
)
from evalkit.checkers.rules.effects import (
    Effects,
    read_text,
    scalar_texts,
    tool_input_text,
)
from evalkit.checkers.rules.patterns import glob_matches, search
from evalkit.checkers.rules.runner_view import runner_check
from evalkit.checkers.rules.timeline import (
    Events,
    in_order,
    last_end,
    of_calls,
    of_runs,
    written_path,
)
from evalkit.checkers.rules.trace import trace_text
from evalkit.models import ToolCall, Transcript
from evalkit.scoring.frontmatter import front_matter
from evalkit.scoring.judge import final_message
from evalkit.scoring.observed import ObservedRun
from evalkit.scoring.safefile import Unreadable
from evalkit.scoring.shellpaths import reach
from evalkit.scoring.transcript import succeeded

SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/@+*?-")


def token(text: str) -> str:
    """Agent-written text (a path, a skill name) made safe for a reason cell."""
    cleaned = "".join(c if c in SAFE else "_" for c in text)
    return cleaned[:120] or "_"


@dataclass
class Outcome:
    value: bool | None
    """None: undecided."""
    tokens: list[str] = field(default_factory=list)
    """What decided it; for an undecided outcome, why it could not be decided."""
    pending: bool = False
    """Undecided only because the judge has not been asked yet."""


class JudgeGate:
    """Asks the judge at most once per rep, and only once asking is allowed."""

    def __init__(self, ask: Callable[[], bool | str]) -> None:
        self._ask = ask
        self.allowed = False
        self.answer: bool | str | None = None

    def outcome(self) -> Outcome:
        if not self.allowed:
            return Outcome(None, ["judge"], pending=True)
        if self.answer is None:
            self.answer = self._ask()
        if isinstance(self.answer, str):
            return Outcome(None, [f"judge-error:{token(self.answer)}"])
        return Outcome(self.answer, ["judge"])


def evaluate(node: Node, effects: Effects, judge: JudgeGate) -> Outcome:
    got = _evaluate(node, effects, judge)
    if node.reason and got.value is not None:
        got.tokens = [node.reason]
    return got


def _ordered(children: list[Node]) -> list[Node]:
    return [c for c in children if not c.has_judge()] + [c for c in children if c.has_judge()]


def _combine(children: list[Node], effects: Effects, judge: JudgeGate, want: bool) -> Outcome:
    """all (want=False decides) and any (want=True decides), short-circuiting."""
    undecided: list[Outcome] = []
    held: list[str] = []
    for child in _ordered(children):
        got = evaluate(child, effects, judge)
        if got.value is want:
            return Outcome(want, got.tokens)
        if got.value is None:
            undecided.append(got)
        else:
            held += got.tokens
    if undecided:
        tokens = [t for u in undecided for t in u.tokens]
        return Outcome(None, tokens, pending=all(u.pending for u in undecided))
    return Outcome(not want, held)


EventNode = RanCondition | ToolCondition | SkillCondition | BashCondition | FileCondition


def _evaluate(node: Node, effects: Effects, judge: JudgeGate) -> Outcome:
    if isinstance(node, AllCondition | AnyCondition | NotCondition | JudgeCondition):
        return _logical(node, effects, judge)
    if isinstance(node, OrderCondition):
        return _order(node, effects)
    if isinstance(node, RunnerCondition):
        held, name = runner_check(node.plugin_eval, effects.transcript)
        return Outcome(held, [name])
    if isinstance(node, EventNode) and (node.after is not None or isinstance(node, RanCondition)):
        return _on_timeline(node, effects)
    if isinstance(node, FileCondition):
        return _file(node.file, effects)
    return _in_transcript(node, effects.transcript)


def _logical(
    node: AllCondition | AnyCondition | NotCondition | JudgeCondition,
    effects: Effects,
    judge: JudgeGate,
) -> Outcome:
    if isinstance(node, AllCondition):
        return _combine(node.all, effects, judge, want=False)
    if isinstance(node, AnyCondition):
        return _combine(node.any, effects, judge, want=True)
    if isinstance(node, NotCondition):
        got = evaluate(node.not_, effects, judge)
        if got.value is None:
            return got
        return Outcome(not got.value, [f"not-{t}" for t in got.tokens])
    return judge.outcome()


def _in_transcript(node: Node, transcript: Transcript) -> Outcome:
    """A condition read from the transcript alone, with no order to it."""
    if isinstance(node, ToolCondition):
        spec = node.tool
        hits = _tool_hits(spec, transcript.tool_calls)
        least = 1 if spec.min is None else spec.min
        held = len(hits) >= least and (spec.max is None or len(hits) <= spec.max)
        if spec.min is None and spec.max is None:
            return Outcome(held, [f"tool:{token(hits[0].name if hits else spec.name)}"])
        return Outcome(held, [f"tool:{token(spec.name)}:{len(hits)}"])
    if isinstance(node, SkillCondition):
        named = _skill_hits(node.skill, transcript.tool_calls)
        return Outcome(bool(named), [f"skill:{token(named[0][1] if named else node.skill.name)}"])
    if isinstance(node, BashCondition):
        return Outcome(bool(_bash_hits(node.bash, transcript.tool_calls)), ["bash"])
    if isinstance(node, HookCondition):
        spec_h = node.hook
        fired = any(
            h.subtype == "hook_response"
            and h.outcome == "success"
            and glob_matches(spec_h.event, h.hook_event)
            and (spec_h.output is None or search(spec_h.output, h.output))
            for h in transcript.hooks
        )
        return Outcome(fired, [f"hook:{token(spec_h.event)}"])
    if isinstance(node, FinalCondition):
        return Outcome(search(node.final, final_message(transcript)), ["final"])
    if isinstance(node, TraceCondition):
        return Outcome(search(node.trace, trace_text(transcript)), ["trace"])
    raise TypeError(f"unknown condition {type(node).__name__}")


def _tool_hits(spec: ToolSpec, calls: list[ToolCall]) -> list[ToolCall]:
    return [
        c
        for c in calls
        if glob_matches(spec.name, c.name)
        and (spec.input is None or search(spec.input, tool_input_text(c)))
        and (spec.ok is None or succeeded(c) is spec.ok)
    ]


def _skill_hits(spec: SkillSpec, calls: list[ToolCall]) -> list[tuple[ToolCall, str]]:
    """Each call of a matching skill, with the skill name it called."""
    return [
        (c, n)
        for c in calls
        if (n := skill_called(c)) is not None
        and skill_matches(spec.name, n)
        and (spec.ok is None or succeeded(c) is spec.ok)
    ]


def _bash_hits(spec: BashSpec, calls: list[ToolCall]) -> list[ToolCall]:
    return [
        c
        for c in calls
        if c.name == "Bash"
        and search(spec.command, str(c.input.get("command", "")))
        and (spec.ok is None or succeeded(c) is spec.ok)
    ]


def _events(node: EventNode, effects: Effects) -> tuple[Events, str] | Outcome:
    """The events node matches, narrowed by its `after`, with the token that names them; an
    Outcome when they cannot be known."""
    got = _matched(node, effects)
    if isinstance(got, Outcome) or node.after is None:
        return got
    found, name = got
    earlier = node.after.last
    assert isinstance(earlier, EventNode)
    last = _events(earlier, effects)
    if isinstance(last, Outcome):
        return last
    cutoff = last_end(last[0])
    if cutoff is None:
        return Outcome(None, [f"order-unplaced:{last[1]}"])
    return found.after(cutoff), f"{name}:after-last:{last[1]}"


def _on_tree(run: ObservedRun, final: str | None) -> bool:
    """Whether a run ended on the final tree: both hashes known and equal. A run that never
    logged its end (killed, or a sourced script that exited the shell) has no end tree, so it
    never counts as on the final tree."""
    return run.end_tree is not None and final is not None and run.end_tree == final


def _matched(node: EventNode, effects: Effects) -> tuple[Events, str] | Outcome:
    """Every event node matches, whenever it happened, with the token that names them."""
    if isinstance(node, RanCondition):
        spec = node.ran
        if effects.observed is None or spec.script not in effects.observe:
            return Outcome(None, [f"not-observed:{token(spec.script)}"])
        runs = [
            r
            for r in effects.observed
            if r.script == spec.script and (spec.ok is None or r.ok is spec.ok)
        ]
        if spec.final is not None:
            final = effects.final_tree()
            runs = [r for r in runs if _on_tree(r, final) is spec.final]
        return of_runs(runs), f"ran:{token(spec.script)}"
    if isinstance(node, FileCondition):
        got = _file_events(node.file, effects)
        if isinstance(got, Outcome):
            return got
        return got, f"file-{node.file.change}:{token(node.file.glob)}"
    calls = effects.transcript.tool_calls
    if isinstance(node, ToolCondition):
        return of_calls(_tool_hits(node.tool, calls)), f"tool:{token(node.tool.name)}"
    if isinstance(node, SkillCondition):
        hits = [c for c, _ in _skill_hits(node.skill, calls)]
        return of_calls(hits), f"skill:{token(node.skill.name)}"
    return of_calls(_bash_hits(node.bash, calls)), "bash"


def _on_timeline(node: EventNode, effects: Effects) -> Outcome:
    got = _events(node, effects)
    if isinstance(got, Outcome):
        return got
    found, name = got
    if found.placed:
        return Outcome(True, [name])
    if found.unplaced and node.after is not None:
        return Outcome(None, [f"order-unplaced:{name}"])
    return Outcome(found.unplaced > 0, [name])


def _order(node: OrderCondition, effects: Effects) -> Outcome:
    steps: list[Events] = []
    names: list[str] = []
    for item in node.order:
        assert isinstance(item, EventNode)
        got = _events(item, effects)
        if isinstance(got, Outcome):
            return got
        steps.append(got[0])
        names.append(got[1])
    held = in_order(steps)
    name = "order:" + ">".join(names)
    if held is None:
        return Outcome(None, [f"order-unplaced:{name}"])
    return Outcome(held, [name])


def _file_events(spec: FileSpec, effects: Effects) -> Events | Outcome:
    """The calls that wrote each file the spec matches (`_matching_files`, the one reading
    of a file condition), on the timeline: every file tool call naming it, and every Bash
    call writing it by effect (a redirection into it, `sed -i` on it, a command naming it
    that is no mere reader), so a late shell change to a file an Edit first wrote is seen
    late. A matching file no call wrote was changed some other way (a script): no place."""
    matching = _matching_files(spec, effects)
    if isinstance(matching, Outcome):
        return matching
    # The calls name paths in the sandbox the agent ran in (a replay lays it out elsewhere).
    init = effects.transcript.init
    project = init.cwd if init is not None and os.path.isabs(init.cwd) else ""
    project = project or str(effects.sandbox / "project")
    folder = os.path.join(os.path.dirname(project), spec.in_)
    calls: list[ToolCall] = []
    unplaced = 0
    for rel in matching:
        target = os.path.join(folder, rel)
        wrote = [
            c
            for c in effects.transcript.tool_calls
            if (written_path(c, folder, project) == rel and succeeded(c))
            or _shell_writes(c, target, project)
        ]
        calls += [c for c in wrote if c not in calls]
        unplaced += not wrote
    found = of_calls(sorted(calls, key=lambda c: c.line))
    found.unplaced = unplaced
    return found


def _shell_writes(call: ToolCall, target: str, project: str) -> bool:
    if call.name != "Bash" or not succeeded(call):
        return False
    return bool(reach(str(call.input.get("command", "")), target, project, "").writes)


def skill_called(call: ToolCall) -> str | None:
    """The skill a Skill (or SlashCommand) call names, without a leading slash or args."""
    if call.name not in ("Skill", "SlashCommand"):
        return None
    raw = str(call.input.get("skill") or call.input.get("command") or "").strip()
    return raw.split()[0].lstrip("/") if raw else None


def skill_matches(wanted: str, called: str) -> bool:
    """os-adr:find matches os-adr:find, and a bare find (the CLI resolves it to the plugin's
    skill); a bare wanted name matches that skill from any plugin."""
    if glob_matches(wanted, called):
        return True
    if ":" in wanted and ":" not in called:
        return glob_matches(wanted.partition(":")[2], called)
    if ":" not in wanted:
        return glob_matches(wanted, called.rpartition(":")[2])
    return False


def _file(spec: FileSpec, effects: Effects) -> Outcome:
    matching = _matching_files(spec, effects)
    if isinstance(matching, Outcome):
        return matching
    kind = f"file-{spec.change}"
    if matching:
        return Outcome(True, [f"{kind}:{token(matching[0])}"])
    return Outcome(False, [f"{kind}:{token(spec.glob)}"])


def _matching_files(spec: FileSpec, effects: Effects) -> list[str] | Outcome:
    """The files of the spec's folder that changed as it asks (created, changed, deleted or
    written), match its glob and hold its content and front matter: the one reading of a
    file condition, plain or on the timeline. Undecided (an Outcome) when the folder is
    missing, or when no file matches but one could not be read."""
    changes = effects.changes(spec.in_)
    if changes is None:
        return Outcome(None, [f"no-such-folder:{token(spec.in_)}"])
    pool = {
        "created": changes.added,
        "changed": changes.changed,
        "deleted": changes.deleted,
        "written": changes.written,
    }[spec.change]
    candidates = [p for p in pool if glob_matches(spec.glob, p)]
    if spec.content is None and spec.front_matter is None:
        return candidates
    matching: list[str] = []
    unreadable: list[str] = []
    for rel in candidates:
        try:
            text = read_text(effects.sandbox / spec.in_ / rel)
        except Unreadable as exc:
            unreadable.append(f"file-unreadable:{token(rel)}:{exc}")
            continue
        if _content_matches(spec, text):
            matching.append(rel)
    if unreadable and not matching:
        return Outcome(None, unreadable)
    return matching


def _content_matches(spec: FileSpec, text: str) -> bool:
    if spec.content is not None and not search(spec.content, text):
        return False
    if spec.front_matter is not None:
        data = front_matter(text)
        if data is None:
            return False
        for name, pattern in spec.front_matter.items():
            values = scalar_texts(data[name]) if name in data else None
            if not values or not any(search(pattern, v) for v in values):
                return False
    return True

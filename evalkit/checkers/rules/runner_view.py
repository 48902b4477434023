"""A rep as `claude plugin eval` grades it, and its graders' conditions held that way.

The pinned CLI's runner reads the run's stream-json events as they parsed: its tool calls
are every `tool_use` block of every assistant event, in stream order (calls sent in one
message keep their order in it), each with `JSON.stringify(input)` as the text an
`input_match` searches; its last message is the last assistant event's text blocks, joined
by newlines; its trace is every event, `JSON.stringify`'d, one a line. evalkit's CLI
launch adds `--include-hook-events`, which the runner does not pass, so those hook events
(all but SessionStart's) are left out of the trace. Regexes are JavaScript's (`jsregex`).
A `tool_order` compares the first call matching each side; `tool_used` counts the matching
calls, `min` 1 and `max` unbounded unless given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.checkers.rules.conditions import RunnerSpec
from evalkit.checkers.rules.jsregex import js_test
from evalkit.models import Transcript
from evalkit.scoring.jstext import input_text, js_stringify


@dataclass(frozen=True)
class RunnerCall:
    name: str
    input_text: str


@dataclass(frozen=True)
class RunnerRun:
    calls: list[RunnerCall]
    last_message: str
    trace: str


def _is_added_hook(event: dict[str, Any]) -> bool:
    """A hook event only `--include-hook-events` makes (every hook but SessionStart's)."""
    subtype = str(event.get("subtype") or "")
    return (
        event.get("type") == "system"
        and subtype.startswith("hook_")
        and event.get("hook_event") != "SessionStart"
    )


def _blocks(event: dict[str, Any]) -> list[Any]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def runner_run(transcript: Transcript) -> RunnerRun:
    calls: list[RunnerCall] = []
    last = ""
    for event in transcript.events:
        if event.get("type") != "assistant":
            continue
        texts: list[str] = []
        for block in _blocks(event):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                given = block.get("input")
                text = "" if "input" not in block else input_text(given)
                calls.append(RunnerCall(str(block.get("name") or ""), text))
            elif block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
        if texts:
            last = "\n".join(texts)
    lines = [js_stringify(e) for e in transcript.events if not _is_added_hook(e)]
    return RunnerRun(calls, last, "\n".join(lines))


_LAST: list[tuple[Transcript, RunnerRun]] = []


def cached_run(transcript: Transcript) -> RunnerRun:
    """The runner's view of the rep being scored, built once for all its graders."""
    if _LAST and _LAST[0][0] is transcript:
        return _LAST[0][1]
    run = runner_run(transcript)
    _LAST[:] = [(transcript, run)]
    return run


def _matches(call: RunnerCall, tool: str, input_match: str | None) -> bool:
    if call.name != tool:
        return False
    return input_match is None or js_test(input_match, "", call.input_text)


def tool_count(run: RunnerRun, tool: str, input_match: str | None) -> int:
    return sum(1 for c in run.calls if _matches(c, tool, input_match))


def first_call(run: RunnerRun, tool: str, input_match: str | None) -> int:
    """The index of the first call matching, -1 when none does."""
    return next((i for i, c in enumerate(run.calls) if _matches(c, tool, input_match)), -1)


def in_first_order(run: RunnerRun, before: tuple[str, str | None],
                   after: tuple[str, str | None]) -> bool:  # fmt: skip
    """The first `before` call comes before the first `after` call; false when either
    side was never called."""
    first, second = first_call(run, *before), first_call(run, *after)
    return first != -1 and second != -1 and first < second


def regex_holds(run: RunnerRun, pattern: str, flags: str, target: str) -> bool:
    text = run.trace if target == "trace" else run.last_message
    return js_test(pattern, flags, text)


def _token(text: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "_.:/@+-") else "_"
                   for c in text)[:60] or "_"  # fmt: skip


def runner_check(spec: RunnerSpec, transcript: Transcript) -> tuple[bool, str]:
    """Whether the check holds on this rep, as the runner decides it, and its token."""
    run = cached_run(transcript)
    if spec.grader == "regex":
        assert spec.pattern is not None
        held = regex_holds(run, spec.pattern, spec.flags, spec.target)
        return held, f"plugin-eval:regex:{spec.target}"
    if spec.grader == "tool_used":
        assert spec.tool is not None
        count = tool_count(run, spec.tool.tool, spec.tool.input_match)
        held = count >= spec.min and (spec.max is None or count <= spec.max)
        return held, f"plugin-eval:tool:{_token(spec.tool.tool)}:{count}"
    assert spec.before is not None and spec.after is not None
    before, after = spec.before, spec.after
    held = in_first_order(run, (before.tool, before.input_match), (after.tool, after.input_match))
    return held, f"plugin-eval:order:{_token(before.tool)}>{_token(after.tool)}"

"""Whether a rep is a measurement at all: the CLI's own words that it failed, the hooks a
suite requires (fired, failed, missing, or impossible for this agent), and a judge's answer
that is no answer. Each makes the row an ERROR; `decide.py` applies them in its order."""

from __future__ import annotations

from evalkit.models import RequiredHook, Transcript, Verdict
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.judge import build_prompt
from evalkit.scoring.streams import HOOK_EVENTS
from evalkit.scoring.transcript import agent_error_words


def error_verdict(inp: CheckInput, reason: str) -> Verdict:
    return Verdict(
        scenario=inp.scenario.id,
        model=inp.model,
        polarity=inp.scenario.scenario.polarity,
        axis_a="A:ERROR",
        axis_b="B:ERROR",
        verdict="ERROR",
        reasons=[reason],
    )


def agent_error(transcript: Transcript) -> str | None:
    """The CLI's own words that it failed: a result line marked as an error (or as stopped
    by a turn budget), in the few words `agent_error_words` allows."""
    result = transcript.result
    if result is None or not (result.is_error or result.terminal_reason == "max_turns"):
        return None
    return agent_error_words(transcript)


def _fired(transcript: Transcript, hook: RequiredHook) -> bool:
    return any(
        h.subtype == "hook_response"
        and h.hook_event == hook.event
        and h.outcome == "success"
        and hook.output_contains in h.output
        for h in transcript.hooks
    )


def failed_hooks(transcript: Transcript, required: list[RequiredHook]) -> list[str]:
    """Required hooks that started and exited non-zero, and never succeeded: the harness
    (a path, a quoting bug), not the agent, kept the plugin from announcing itself."""
    failed = []
    for hook in required:
        if _fired(transcript, hook):
            continue
        codes = [
            h.exit_code
            for h in transcript.hooks
            if h.subtype == "hook_response" and h.hook_event == hook.event and h.exit_code
        ]
        if codes:
            failed.append(f"hook-failed:{hook.event}:{codes[0]}")
    return failed


HELD_FIRST = ("SessionStart", "UserPromptSubmit")
"""Hooks that run before the agent's first turn, so before its first tool call."""


def hook_tampering(transcript: Transcript, problems: list[str]) -> str | None:
    """The reason token when a hook run evalkit recorded itself cannot be one: its log was
    rewritten or holds a line that is no hook run (`problems`), or a hook that runs before
    the agent's first turn arrived after its first tool call (written by the agent's own
    shell, which can write the log); None otherwise. Runs the stream reports have no place
    of evalkit's and are the CLI's own."""
    if problems:
        return f"tampering:{problems[0]}"
    first = min((call.line for call in transcript.tool_calls), default=None)
    for hook in transcript.hooks:
        if hook.line is None or first is None or hook.hook_event not in HELD_FIRST:
            continue
        if hook.line > first:
            return f"tampering:hook-run-out-of-place:{hook.hook_event}"
    return None


def hooks_for(transcript: Transcript, required: list[RequiredHook]) -> list[RequiredHook]:
    """The required hooks that apply to the agent whose stream this is."""
    return [h for h in required if h.agents is None or transcript.agent in h.agents]


def unrunnable_hooks(transcript: Transcript, required: list[RequiredHook]) -> list[str]:
    """Required hooks whose event the agent has no hook for: none of its reps can show one
    fired, so each is an ERROR of the instrument, never the agent's FAIL nor a pass."""
    events = HOOK_EVENTS.get(transcript.agent)
    if events is None:
        return []
    return [f"hook-unsupported:{transcript.agent}:{h.event}" for h in required
            if h.event not in events]  # fmt: skip


def missing_hooks(transcript: Transcript, required: list[RequiredHook]) -> list[str]:
    """Required hooks without a successful hook_response carrying the expected output."""
    return [f"hook-missing:{h.event}" for h in required if not _fired(transcript, h)]


def ask_judge(
    inp: CheckInput, verdict: Verdict, message: str, rubric_name: str | None = None
) -> Verdict | None:
    """Put a frozen rubric (the judge's own, or the one `judge.rubrics` names) and one message
    to the judge; the record goes on the verdict.

    Returns an ERROR verdict, keeping the record and the flags, when the judge failed or
    answered anything but YES or NO; None when its answer is on the verdict to read.
    """
    rubric = inp.instrument.rubric_text(rubric_name)
    record = inp.judge.ask(build_prompt(rubric, message))
    verdict.judge = record
    if record.error is None and record.answer is not None:
        return None
    failed = error_verdict(inp, f"judge-error:{record.error}")
    failed.judge, failed.flags = record, list(verdict.flags)
    return failed

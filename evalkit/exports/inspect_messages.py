"""A rep's kept transcript as Inspect AI chat messages, every string through the Task mask.

A log made to be shared must never hold a Task, and a real model may quote its prompt; so
each text, tool input and tool result goes through the mask the HTML report uses before it
becomes a message. The mapping is deliberately plain: the assistant's text, its tool calls
and their results, in the order the transcript holds them (Claude Code's stream event by
event; another agent's stream, read through the same parser, as its calls then its texts).
Thinking is left out: the Inspect viewer is for what the agent did.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.errors import PrerequisiteError
from evalkit.models import Transcript
from evalkit.scoring.transcript import parse_transcript
from evalkit.suite.task import TaskMask

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage

INSTALL = "pip install 'heldout-evalkit[inspect]'"


def require_inspect() -> None:
    """One line naming the install when Inspect AI is not there: it is an optional extra."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        raise PrerequisiteError(f"Inspect AI logs need the inspect_ai package: {INSTALL}") from None


def masked(value: Any, mask: TaskMask) -> Any:
    """value with every string in it masked, lists and mappings walked."""
    if isinstance(value, str):
        return mask.mask(value)[0]
    if isinstance(value, list):
        return [masked(item, mask) for item in value]
    if isinstance(value, dict):
        return {str(key): masked(item, mask) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Step:
    """One message-worth of a transcript: text, a tool call, or a tool's result."""

    kind: str
    text: str = ""
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] | None = None
    is_error: bool = False


def transcript_steps(data: bytes) -> list[Step]:
    """The transcript's text, calls and results, in order."""
    transcript = parse_transcript(data)
    # a stream whose events carry messages holds text and calls in their own order; another
    # agent's stream is read through the calls the transcript normalised
    if any(isinstance(event.get("message"), dict) for event in transcript.events):
        return list(_claude_steps(transcript.events))
    return _call_steps(transcript)


def _claude_steps(events: list[dict[str, Any]]) -> Iterator[Step]:
    names: dict[str, str] = {}
    for event in events:
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if event.get("type") == "assistant" and kind == "text":
                yield Step("text", text=str(block.get("text", "")))
            elif event.get("type") == "assistant" and kind == "tool_use":
                call_id, name = str(block.get("id", "")), str(block.get("name", ""))
                names[call_id] = name
                given = block.get("input")
                arguments = given if isinstance(given, dict) else {}
                yield Step("call", call_id=call_id, name=name, arguments=arguments)
            elif event.get("type") == "user" and kind == "tool_result":
                call_id = str(block.get("tool_use_id", ""))
                text = _result_text(block.get("content"))
                failed = block.get("is_error") is True
                yield Step("result", text, call_id, names.get(call_id, ""), is_error=failed)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def _call_steps(transcript: Transcript) -> list[Step]:
    steps: list[Step] = []
    for call in sorted(transcript.tool_calls, key=lambda c: c.line):
        steps.append(Step("call", call_id=call.id, name=call.name, arguments=dict(call.input)))
        if call.result is not None:
            failed = call.is_error is True
            steps.append(Step("result", call.result, call.id, call.name, is_error=failed))
    return steps + [Step("text", text=text) for text in transcript.texts]


def chat_messages(placeholder: str, steps: list[Step], mask: TaskMask) -> list[ChatMessage]:
    """The placeholder as the user's turn, then each step as a message, masked."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    messages: list[ChatMessage] = [ChatMessageUser(content=masked(placeholder, mask))]
    for step in steps:
        text = masked(step.text, mask)
        if step.kind == "text":
            messages.append(ChatMessageAssistant(content=text))
        elif step.kind == "call":
            arguments = masked(step.arguments or {}, mask)
            call = ToolCall(id=step.call_id, function=step.name, arguments=arguments)
            messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
        else:
            error = ToolCallError("unknown", text) if step.is_error else None
            messages.append(
                ChatMessageTool(
                    content=text, tool_call_id=step.call_id, function=step.name or None, error=error
                )
            )
    return messages

"""What a scripted model plays: its steps of text and tool calls."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from evalkit.models.base import Strict


class Quote(Strict):
    """Makes a text react to what the tools returned: ``{quote}`` in it becomes the first
    match of ``pattern`` (its first group, if it has one) in the latest tool result."""

    pattern: str
    fallback: str = Field(description="the whole text to say when nothing matches")


class TextBlock(Strict):
    type: Literal["text"] = "text"
    text: str
    quote: Quote | None = None


class ToolUseBlock(Strict):
    type: Literal["tool_use"] = "tool_use"
    name: str
    input: dict[str, Any]


Block = Annotated[TextBlock | ToolUseBlock, Field(discriminator="type")]


class Step(Strict):
    """One assistant message: what the model says and the tools it calls at once."""

    blocks: list[Block]


class Script(Strict):
    """A whole agent turn, played step by step.

    Strings may hold ``{sandbox}``, ``{project}``, ``{real_vault}`` and each extra
    fixture's name; they expand once the sandbox exists.
    """

    steps: list[Step] = Field(default_factory=list)
    final_text: str = "Done."
    final_quote: Quote | None = Field(None, description="makes final_text reactive")

"""What an agent's run leaves to score: the sandbox's manifest and the parsed transcript."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from evalkit.models.base import SCHEMA_VERSION, Model


class SandboxManifest(Model):
    schema_version: int = SCHEMA_VERSION
    scenario: str
    suite: str
    fixture_hashes: dict[str, str]
    evalkit_version: str
    created: str


# --------------------------------------------------------------------------- transcript


class InitEvent(Model):
    model_config = ConfigDict(extra="ignore")

    cwd: str = ""
    session_id: str = ""
    model: str = ""
    claude_code_version: str = ""
    tools: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    plugins: list[dict[str, Any]] = Field(default_factory=list)


class HookEvent(Model):
    model_config = ConfigDict(extra="ignore")

    subtype: str
    hook_name: str = ""
    hook_event: str = ""
    outcome: str = ""
    exit_code: int | None = None
    output: str = ""
    line: int | None = None
    """For a hook run evalkit recorded itself (an agent whose stream reports none): the
    stream's complete lines when evalkit saw the run arrive; None for a run the stream
    reports."""


class ApiRetry(Model):
    model_config = ConfigDict(extra="ignore")

    attempt: int = 0
    error_status: int | None = None
    error: str | None = None
    retry_delay_ms: int | None = None


class ApiErrorMessage(Model):
    """The CLI's synthetic assistant line (``"is_api_error_message": true``) that ends a run it
    could not complete: its own error kind, the HTTP status when there was one, and its text."""

    error: str = ""
    status: int | None = None
    error_type: str = ""
    cause: str = Field("", description="the CLI's api_error field, e.g. connection_failed")
    text: str = ""


class ToolCall(Model):
    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool | None = None
    line: int = 0
    """The transcript line (from 0) of its tool_use block: where it sits on the rep's timeline."""
    result_line: int | None = None
    """The line of its result; None when none came back."""


class ResultEvent(Model):
    model_config = ConfigDict(extra="ignore")

    subtype: str = ""
    is_error: bool = False
    terminal_reason: str | None = None
    result: str | None = ""
    num_turns: int = 0
    duration_ms: int = 0
    total_cost_usd: float = 0.0
    usage: dict[str, Any] = Field(default_factory=dict)
    api_error_status: int | None = None
    api_error_type: str | None = None
    errors: list[str] | None = None


class Transcript(Model):
    """What a stream-json transcript says; whether it is a measurement is scoring's call."""

    init: InitEvent | None = None
    hooks: list[HookEvent] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    texts: list[str] = Field(default_factory=list)
    thoughts: list[str] = Field(
        default_factory=list, description="the model's thinking blocks, where the stream keeps them"
    )
    retries: list[ApiRetry] = Field(default_factory=list)
    api_error: ApiErrorMessage | None = None
    assistant_lines: int = Field(0, description="assistant lines from the model, not the CLI")
    result: ResultEvent | None = None
    bad_lines: list[int] = Field(
        default_factory=list, description="1-based lines that did not parse"
    )
    lines: int = 0
    agent: str = Field("claude", description="whose stream it is, known by its opening event")
    events: list[dict[str, Any]] = Field(
        default_factory=list,
        exclude=True,
        repr=False,
        description="every line that parsed as an object, as it parsed: what a `claude plugin "
        "eval` grader's trace is",
    )

    @property
    def model_id(self) -> str:
        return self.init.model if self.init else ""

    @property
    def cli_version(self) -> str:
        return self.init.claude_code_version if self.init else ""

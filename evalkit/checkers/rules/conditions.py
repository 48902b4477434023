"""The condition language of a rules suite, as it is written in YAML.

A condition is a mapping with one kind key (``file``, ``tool``, ``skill``, ``bash``,
``ran``, ``hook``, ``final``, ``judge``, the combinators ``all``, ``any``, ``not``, or
``order``) and an optional ``reason``: the token the row gets when this condition decides.
The event kinds (``tool``, ``skill``, ``bash``, ``ran``, and ``file`` as the tool calls
that wrote it) sit on the rep's timeline: they take ``after: {last: EVENT}`` (only events
after the last matching one count), and ``order: [EVENT, ...]`` holds when they happened
in that order. Every
pattern is compiled by RE2 when the suite loads, so a bad one is refused with its
file and field before any rep runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from evalkit.checkers.rules.patterns import compile_pattern, glob_to_pattern
from evalkit.models import StrictAliased

TOKEN = r"^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,79}$"
"""Reason tokens go into a TSV cell between ';': no spaces, tabs or separators."""

KINDS = (
    "all", "any", "not", "order", "file", "tool", "skill", "bash", "ran", "hook", "final", "judge",
    "trace", "plugin_eval",
)  # fmt: skip
EVENT_KINDS = ("file", "tool", "skill", "bash", "ran")
CHANGES = ("created", "changed", "deleted", "written")


def _pattern(value: str | None) -> str | None:
    if value is not None:
        compile_pattern(value)
    return value


def _glob(value: str | None) -> str | None:
    if value is not None:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError(f"glob {value!r} must be relative to the folder, without '..'")
        compile_pattern(glob_to_pattern(value))
    return value


Pattern = Annotated[str, AfterValidator(_pattern)]
"""An RE2 pattern, compiled as the suite loads, so a bad one is refused with its field."""


def _shorthand(key: str) -> BeforeValidator:
    """A bare string for a spec's one main key: `tool: Write` is `tool: {name: Write}`."""
    return BeforeValidator(lambda value: {key: value} if isinstance(value, str) else value)


class _Node(StrictAliased):
    reason: Annotated[str | None, Field(pattern=TOKEN)] = None

    def has_judge(self) -> bool:
        return False


class _Event(_Node):
    """A condition over events of the timeline; `after` narrows it to the later ones."""

    after: After | None = None


# --------------------------------------------------------------------------- leaves


class FileSpec(StrictAliased):
    """A file of a sandbox folder that differs from the fixture. Exactly one of
    created / changed / deleted / written (created or changed) names the glob."""

    in_: str = Field("project", alias="in", description="project or an extra fixture's name")
    created: str | None = None
    changed: str | None = None
    deleted: str | None = None
    written: str | None = None
    content: Pattern | None = Field(None, description="RE2 pattern the file's text must match")
    front_matter: dict[str, str] | None = Field(
        None, description="field -> RE2 pattern its value must match ('' = present)"
    )

    @field_validator("created", "changed", "deleted", "written")
    @classmethod
    def _globs(cls, value: str | None) -> str | None:
        return _glob(value)

    @field_validator("front_matter")
    @classmethod
    def _fields(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for pattern in (value or {}).values():
            _pattern(pattern)
        return value

    @model_validator(mode="after")
    def _one_change(self) -> FileSpec:
        given = [c for c in CHANGES if getattr(self, c) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(CHANGES)}")
        if given[0] == "deleted" and (self.content or self.front_matter):
            raise ValueError("a deleted file has no content or front matter to match")
        return self

    @property
    def change(self) -> str:
        return next(c for c in CHANGES if getattr(self, c) is not None)

    @property
    def glob(self) -> str:
        value = getattr(self, self.change)
        assert isinstance(value, str)
        return value


class FileCondition(_Event):
    file: FileSpec


class ToolSpec(StrictAliased):
    name: str = Field(description="tool name; a glob, e.g. Write or mcp__*")
    input: Pattern | None = Field(
        None, description="RE2 pattern over the input as compact JSON (JSON.stringify)"
    )
    ok: bool | None = Field(None, description="true: succeeded; false: failed; absent: either")
    min: int | None = Field(None, ge=0, description="at least this many matching calls (default 1)")
    max: int | None = Field(None, ge=0, description="at most this many matching calls")



class ToolCondition(_Event):
    tool: Annotated[ToolSpec, _shorthand("name")]



class SkillSpec(StrictAliased):
    name: str = Field(description="plugin:skill, or a bare skill name; a glob")
    ok: bool | None = None


class SkillCondition(_Event):
    skill: Annotated[SkillSpec, _shorthand("name")]



class BashSpec(StrictAliased):
    command: Pattern = Field(description="RE2 pattern over the Bash command")
    ok: bool | None = None



class BashCondition(_Event):
    bash: Annotated[BashSpec, _shorthand("command")]



class RanSpec(StrictAliased):
    script: str = Field(description="an observed script, as the suite's `observe` names it")
    ok: bool | None = Field(None, description="true: it exited 0; false: it did not")
    final: bool | None = Field(
        None,
        description="true: it ended on the project as the agent left it (git's tree hash at "
        "its end equals the final tree's); false: on another tree",
    )


class RanCondition(_Event):
    ran: Annotated[RanSpec, _shorthand("script")]



class HookSpec(StrictAliased):
    event: str = Field(description="hook_event, e.g. SessionStart")
    output: Pattern | None = Field(None, description="RE2 pattern over the hook's output")



class HookCondition(_Node):
    hook: Annotated[HookSpec, _shorthand("event")]



class FinalCondition(_Node):
    final: Pattern = Field(description="RE2 pattern over the final message")



class TraceCondition(_Node):
    trace: str = Field(description="RE2 pattern over the rep's trace, one JSON line per event")

    @field_validator("trace")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _pattern(value)


class RunnerTool(StrictAliased):
    tool: str
    input_match: str | None = None

    @field_validator("input_match")
    @classmethod
    def _javascript(cls, value: str | None) -> str | None:
        return _js_pattern(value, "")


class RunnerSpec(StrictAliased):
    """A `claude plugin eval` grader's check, held as its runner holds it
    (`runner_view`): a JavaScript regex over the last message or the trace, a count of
    matching calls, or the first call of one tool before the first of another."""

    grader: Literal["regex", "tool_used", "tool_order"]
    pattern: str | None = None
    flags: str = ""
    target: Literal["last_message", "trace"] = "last_message"
    tool: RunnerTool | None = None
    min: int = Field(1, ge=0)
    max: int | None = Field(None, ge=0)
    before: RunnerTool | None = None
    after: RunnerTool | None = None

    @model_validator(mode="after")
    def _complete(self) -> RunnerSpec:
        needs = {"regex": ("pattern",), "tool_used": ("tool",), "tool_order": ("before", "after")}
        missing = [k for k in needs[self.grader] if getattr(self, k) is None]
        if missing:
            raise ValueError(f"a {self.grader} check needs {', '.join(missing)}")
        _js_pattern(self.pattern, self.flags)
        return self


def _js_pattern(pattern: str | None, flags: str) -> str | None:
    from evalkit.checkers.rules.jsregex import to_re2

    if pattern is not None:
        compile_pattern(to_re2(pattern, flags))
    return pattern


class RunnerCondition(_Node):
    plugin_eval: RunnerSpec = Field(description="holds as `claude plugin eval` grades it")


class JudgeCondition(_Node):
    judge: Literal[True] = Field(description="the frozen rubric judge answers YES")
    rubric: str | None = Field(None, description="a `judge.rubrics` name; default: the rubric")
    votes: Literal[1, 3] = Field(1, description="3: asked three times, the majority decides")

    def has_judge(self) -> bool:
        return True


# --------------------------------------------------------------------------- combinators


class AllCondition(_Node):
    all: list[Condition] = Field(min_length=1)

    def has_judge(self) -> bool:
        return any(c.has_judge() for c in self.all)


class AnyCondition(_Node):
    any: list[Condition] = Field(min_length=1)

    def has_judge(self) -> bool:
        return any(c.has_judge() for c in self.any)


class NotCondition(_Node):
    not_: Condition = Field(alias="not")

    def has_judge(self) -> bool:
        return self.not_.has_judge()


def _event_kind(value: Any) -> Any:
    """An event condition only: anything else has no place on the timeline."""
    kind = _kind(value)
    if kind is not None and kind not in EVENT_KINDS:
        raise ValueError(f"`{kind}` is not an event; give one of: {', '.join(EVENT_KINDS)}")
    return value


class After(StrictAliased):
    last: Condition = Field(description="an event condition; only later events count")

    @field_validator("last", mode="before")
    @classmethod
    def _an_event(cls, value: Any) -> Any:
        return _event_kind(value)


class OrderCondition(_Node):
    """Events that happened in this order (each after the previous one ended). A plugin
    case's `tool_order` grader is not this: it is the runner's first-call rule
    (`runner_view`)."""

    order: list[Condition] = Field(min_length=2)

    @field_validator("order", mode="before")
    @classmethod
    def _events(cls, value: Any) -> Any:
        return [_event_kind(v) for v in value] if isinstance(value, list) else value


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        found = [k for k in KINDS if k in value]
        return found[0] if len(found) == 1 else None
    return next((k for k in KINDS if isinstance(value, _MODELS[k])), None)


Condition = Annotated[
    Annotated[AllCondition, Tag("all")]
    | Annotated[AnyCondition, Tag("any")]
    | Annotated[NotCondition, Tag("not")]
    | Annotated[OrderCondition, Tag("order")]
    | Annotated[FileCondition, Tag("file")]
    | Annotated[ToolCondition, Tag("tool")]
    | Annotated[SkillCondition, Tag("skill")]
    | Annotated[BashCondition, Tag("bash")]
    | Annotated[RanCondition, Tag("ran")]
    | Annotated[HookCondition, Tag("hook")]
    | Annotated[FinalCondition, Tag("final")]
    | Annotated[JudgeCondition, Tag("judge")]
    | Annotated[TraceCondition, Tag("trace")]
    | Annotated[RunnerCondition, Tag("plugin_eval")],
    Discriminator(
        _kind,
        custom_error_type="condition",
        custom_error_message="a condition needs exactly one of: " + ", ".join(KINDS),
    ),
]

_MODELS: dict[str, type[_Node]] = {
    "all": AllCondition,
    "any": AnyCondition,
    "not": NotCondition,
    "order": OrderCondition,
    "file": FileCondition,
    "tool": ToolCondition,
    "skill": SkillCondition,
    "bash": BashCondition,
    "ran": RanCondition,
    "hook": HookCondition,
    "final": FinalCondition,
    "judge": JudgeCondition,
    "trace": TraceCondition,
    "plugin_eval": RunnerCondition,
}

Node = (
    AllCondition
    | AnyCondition
    | NotCondition
    | OrderCondition
    | FileCondition
    | ToolCondition
    | SkillCondition
    | BashCondition
    | RanCondition
    | HookCondition
    | FinalCondition
    | JudgeCondition
    | TraceCondition
    | RunnerCondition
)

for _model in (
    After, AllCondition, AnyCondition, NotCondition, OrderCondition, FileCondition,
    ToolCondition, SkillCondition, BashCondition, RanCondition,
):  # fmt: skip
    _model.model_rebuild()


# --------------------------------------------------------------------------- rule sets


def no_judge_in_info(info: list[Node]) -> list[Node]:
    if any(c.has_judge() for c in info):
        raise ValueError("info conditions never ask the judge")
    return info


class PositiveRules(StrictAliased):
    """A positive passes when axis A holds and, if given, axis B holds too."""

    a: Condition | None = None
    b: Condition | None = None
    info: list[Condition] = Field(
        default_factory=list, description="written as flags when they hold; never decide"
    )
    with_only: list[str] = Field(
        default_factory=list,
        description="reasons of conditions scored only with the subject: the no-plugin arm "
        "(--variant none) drops and flags them",
    )

    @field_validator("info")
    @classmethod
    def _mechanical(cls, info: list[Node]) -> list[Node]:
        return no_judge_in_info(info)


class NegativeRules(StrictAliased):
    """A negative fails when its fail condition holds."""

    fail: Condition | None = None
    info: list[Condition] = Field(default_factory=list)
    with_only: list[str] = Field(
        default_factory=list,
        description="reasons of conditions scored only with the subject: the no-plugin arm "
        "(--variant none) drops and flags them",
    )

    @field_validator("info")
    @classmethod
    def _mechanical(cls, info: list[Node]) -> list[Node]:
        return no_judge_in_info(info)

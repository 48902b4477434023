"""The condition language of a rules suite, as it is written in YAML.

A condition is a mapping with one kind key (``file``, ``tool``, ``skill``, ``bash``,
``hook``, ``final``, ``judge``, or the combinators ``all``, ``any``, ``not``) and an
optional ``reason``: the token the row gets when this condition decides. Every
pattern is compiled by RE2 when the suite loads, so a bad one is refused with its
file and field before any rep runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from evalkit.checkers.rules.patterns import compile_pattern, glob_to_pattern
from evalkit.models import Model

TOKEN = r"^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,79}$"
"""Reason tokens go into a TSV cell between ';': no spaces, tabs or separators."""

KINDS = ("all", "any", "not", "file", "tool", "skill", "bash", "hook", "final", "judge")
CHANGES = ("created", "changed", "deleted", "written")


class _Strict(Model):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


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


class _Node(_Strict):
    reason: Annotated[str | None, Field(pattern=TOKEN)] = None

    def has_judge(self) -> bool:
        return False


# --------------------------------------------------------------------------- leaves


class FileSpec(_Strict):
    """A file of a sandbox folder that differs from the fixture. Exactly one of
    created / changed / deleted / written (created or changed) names the glob."""

    in_: str = Field("project", alias="in", description="project or an extra fixture's name")
    created: str | None = None
    changed: str | None = None
    deleted: str | None = None
    written: str | None = None
    content: str | None = Field(None, description="RE2 pattern the file's text must match")
    front_matter: dict[str, str] | None = Field(
        None, description="field -> RE2 pattern its value must match ('' = present)"
    )

    @field_validator("created", "changed", "deleted", "written")
    @classmethod
    def _globs(cls, value: str | None) -> str | None:
        return _glob(value)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str | None) -> str | None:
        return _pattern(value)

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


class FileCondition(_Node):
    file: FileSpec


class ToolSpec(_Strict):
    name: str = Field(description="tool name; a glob, e.g. Write or mcp__*")
    input: str | None = Field(None, description="RE2 pattern over the input as JSON")
    ok: bool | None = Field(None, description="true: succeeded; false: failed; absent: either")

    @field_validator("input")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _pattern(value)


class ToolCondition(_Node):
    tool: ToolSpec


class SkillSpec(_Strict):
    name: str = Field(description="plugin:skill, or a bare skill name; a glob")
    ok: bool | None = None


def _shorthand(key: str) -> Any:
    def before(value: Any) -> Any:
        return {key: value} if isinstance(value, str) else value

    return before


class SkillCondition(_Node):
    skill: SkillSpec

    @field_validator("skill", mode="before")
    @classmethod
    def _short(cls, value: Any) -> Any:
        return _shorthand("name")(value)


class BashSpec(_Strict):
    command: str = Field(description="RE2 pattern over the Bash command")
    ok: bool | None = None

    @field_validator("command")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _pattern(value)


class BashCondition(_Node):
    bash: BashSpec

    @field_validator("bash", mode="before")
    @classmethod
    def _short(cls, value: Any) -> Any:
        return _shorthand("command")(value)


class HookSpec(_Strict):
    event: str = Field(description="hook_event, e.g. SessionStart")
    output: str | None = Field(None, description="RE2 pattern over the hook's output")

    @field_validator("output")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _pattern(value)


class HookCondition(_Node):
    hook: HookSpec

    @field_validator("hook", mode="before")
    @classmethod
    def _short(cls, value: Any) -> Any:
        return _shorthand("event")(value)


class FinalCondition(_Node):
    final: str = Field(description="RE2 pattern over the final message")

    @field_validator("final")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _pattern(value)


class JudgeCondition(_Node):
    judge: Literal[True] = Field(description="the frozen rubric judge answers YES")

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


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        found = [k for k in KINDS if k in value]
        return found[0] if len(found) == 1 else None
    return next((k for k in KINDS if isinstance(value, _MODELS[k])), None)


Condition = Annotated[
    Annotated[AllCondition, Tag("all")]
    | Annotated[AnyCondition, Tag("any")]
    | Annotated[NotCondition, Tag("not")]
    | Annotated[FileCondition, Tag("file")]
    | Annotated[ToolCondition, Tag("tool")]
    | Annotated[SkillCondition, Tag("skill")]
    | Annotated[BashCondition, Tag("bash")]
    | Annotated[HookCondition, Tag("hook")]
    | Annotated[FinalCondition, Tag("final")]
    | Annotated[JudgeCondition, Tag("judge")],
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
    "file": FileCondition,
    "tool": ToolCondition,
    "skill": SkillCondition,
    "bash": BashCondition,
    "hook": HookCondition,
    "final": FinalCondition,
    "judge": JudgeCondition,
}

Node = (
    AllCondition
    | AnyCondition
    | NotCondition
    | FileCondition
    | ToolCondition
    | SkillCondition
    | BashCondition
    | HookCondition
    | FinalCondition
    | JudgeCondition
)

for _model in (AllCondition, AnyCondition, NotCondition):
    _model.model_rebuild()


# --------------------------------------------------------------------------- rule sets


def no_judge_in_info(info: list[Node]) -> list[Node]:
    if any(c.has_judge() for c in info):
        raise ValueError("info conditions never ask the judge")
    return info


class PositiveRules(_Strict):
    """A positive passes when axis A holds and, if given, axis B holds too."""

    a: Condition | None = None
    b: Condition | None = None
    info: list[Condition] = Field(
        default_factory=list, description="written as flags when they hold; never decide"
    )

    @field_validator("info")
    @classmethod
    def _mechanical(cls, info: list[Node]) -> list[Node]:
        return no_judge_in_info(info)


class NegativeRules(_Strict):
    """A negative fails when its fail condition holds."""

    fail: Condition | None = None
    info: list[Condition] = Field(default_factory=list)

    @field_validator("info")
    @classmethod
    def _mechanical(cls, info: list[Node]) -> list[Node]:
        return no_judge_in_info(info)

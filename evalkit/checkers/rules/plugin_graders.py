"""`claude plugin eval` graders as conditions of the rules checker.

A case's graders decide together: with the source format's default threshold (1.0, every
grader passes) a rep PASSes when all of them hold, so the graders of tool calls
(`tool_used`, `tool_order`) become axis A and the rest axis B, each an `all`. A case whose
graders only assert absence (no such call, no such file, no such text) is a negative: it
fails when any of the things it forbids is there. Each grader's reason token names it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from evalkit.checkers.rules.jsregex import JsRegexError, to_re2
from evalkit.models import Model


class GraderError(ValueError):
    """A grader evalkit cannot honour as written; the message names the field."""


class _Grader(Model):
    """The fields every grader of the pinned CLI's schema has; like it, unknown keys are
    refused."""

    model_config = ConfigDict(extra="forbid")

    name: str
    weight: float = Field(1.0, gt=0)
    arm: Literal["with-only", "both"] | None = None


class FileTarget(Model):
    model_config = ConfigDict(extra="forbid")
    source: Literal["file"]
    path: str


Target = Literal["last_message", "trace", "files", "mock_calls"] | FileTarget


class ToolRef(Model):
    model_config = ConfigDict(extra="forbid")
    tool: str
    input_match: str | None = None


class RegexGrader(_Grader):
    type: Literal["regex"]
    pattern: str
    flags: str = Field("", pattern=r"^[dgimsuvy]*$")
    target: Target = "last_message"
    match: str = Field("contains", pattern=r"^(contains|not_contains|count:\d+)$")


class ToolUsedGrader(_Grader):
    type: Literal["tool_used"]
    tool: str
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)
    input_match: str | None = None


class ToolOrderGrader(_Grader):
    type: Literal["tool_order"]
    before: str | ToolRef
    after: str | ToolRef

    def refs(self) -> list[ToolRef]:
        return [r if isinstance(r, ToolRef) else ToolRef(tool=r) for r in (self.before, self.after)]


class FileExistsGrader(_Grader):
    type: Literal["file_exists"]
    path: str
    exists: bool = Field(True, description="false: passes when no such file was created")


class LlmGrader(_Grader):
    type: Literal["llm"]
    criteria: str
    focus: Target = "last_message"


Grader = Annotated[
    RegexGrader | ToolUsedGrader | ToolOrderGrader | FileExistsGrader | LlmGrader,
    Field(discriminator="type"),
]
HONOURED = ("regex", "tool_used", "tool_order", "file_exists", "llm")
_ADAPTER: TypeAdapter[Grader] = TypeAdapter(Grader)
_TOKEN = re.compile(r"[^A-Za-z0-9_.:/@+-]")


def parse_grader(data: Any) -> Grader:
    """One grader mapping, or a GraderError naming the field at fault."""
    if not isinstance(data, dict):
        raise GraderError("(grader): must be a mapping")
    kind = data.get("type")
    if kind == "baseline":
        raise GraderError(
            "type: 'baseline' compares with a reference transcript; evalkit "
            "cannot honour it (compare two wordings with `evalkit compare`)"
        )
    if kind not in HONOURED:
        raise GraderError(f"type: {kind!r} is not a grader type (known: {', '.join(HONOURED)})")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"][1:]) or "(grader)"
        raise GraderError(f"{where}: {err['msg']}") from None


def _js(pattern: str, flags: str = "", field: str = "pattern") -> str:
    """The pattern, once it is known to run as JavaScript runs it (else a GraderError naming
    the construct)."""
    try:
        to_re2(pattern, flags)
    except JsRegexError as exc:
        raise GraderError(f"{field}: {exc}") from None
    return pattern


def _glob(path: str) -> str:
    parts = path.split("/")
    if path.startswith("/") or path.startswith("~") or ".." in parts or not path.strip():
        raise GraderError(f"path: {path!r} escapes the sandbox (give a project-relative glob)")
    return path


def condition_of(grader: Grader, rubric: str | None = None) -> tuple[str, dict[str, Any], bool]:
    """(axis, condition, absence): the condition that holds when the grader passes; for an
    absence grader, the condition is what it forbids (the grader passes when it does not
    hold). regex, tool_used and tool_order hold as the pinned runner holds them
    (`runner_view`)."""
    if isinstance(grader, RegexGrader):
        if grader.target not in ("last_message", "trace"):
            raise GraderError(
                "target: only last_message and trace are honoured; match a "
                "created file with a file_exists grader"
            )
        if grader.match.startswith("count:") and grader.match != "count:0":
            raise GraderError(
                f"match: {grader.match!r} is not honoured (contains, not_contains and count:0 are)"
            )
        spec = {"grader": "regex", "pattern": _js(grader.pattern, grader.flags),
                "flags": grader.flags, "target": grader.target}  # fmt: skip
        return "B", {"plugin_eval": spec}, grader.match != "contains"
    if isinstance(grader, ToolUsedGrader):
        return _tool_used(grader)
    if isinstance(grader, ToolOrderGrader):
        before, after = (_tool_ref(r.tool, r.input_match) for r in grader.refs())
        order: dict[str, Any] = {"grader": "tool_order", "before": before, "after": after}
        return "A", {"plugin_eval": order}, False
    if isinstance(grader, FileExistsGrader):
        return "B", {"file": {"created": _glob(grader.path)}}, not grader.exists
    if grader.focus != "last_message":
        raise GraderError(
            "focus: only last_message is honoured (the judge reads the final message)"
        )
    if not grader.criteria.strip():
        raise GraderError("criteria: empty (write them as the grader file's body)")
    return "B", {"judge": True, "rubric": rubric, "votes": 3}, False


def _tool_ref(tool: str, input_match: str | None) -> dict[str, Any]:
    ref: dict[str, Any] = {"tool": tool}
    if input_match is not None:
        ref["input_match"] = _js(input_match, field="input_match")
    return ref


def _tool_used(grader: ToolUsedGrader) -> tuple[str, dict[str, Any], bool]:
    """min defaults to 1, as in the source runner, so `max: 0` alone can never pass there."""
    low = 1 if grader.min is None else grader.min
    if grader.max is not None and grader.max < low:
        unset = " (min defaults to 1; write min: 0 to assert absence)" if grader.min is None else ""
        raise GraderError(f"max: {grader.max} is below min {low}{unset}")
    ref = _tool_ref(grader.tool, grader.input_match)
    if grader.max == 0:
        return "A", {"plugin_eval": {"grader": "tool_used", "tool": ref}}, True
    spec = {"grader": "tool_used", "tool": ref, "min": low, "max": grader.max}
    return "A", {"plugin_eval": spec}, False


def is_with_only(grader: Grader) -> bool:
    """Scored only with the plugin: marked `arm: with-only`, or a `tool_used` of Skill with
    no `arm` (the runner's implicit "plugin fired" rule)."""
    implicit = grader.arm is None and isinstance(grader, ToolUsedGrader) and grader.tool == "Skill"
    return grader.arm == "with-only" or implicit


def reason(grader: Grader, index: int) -> str:
    """The token a grader's verdict is reported under: its name, made TSV-safe."""
    name = _TOKEN.sub("_", grader.name or f"{grader.type}-{index + 1}").lstrip("_.:/@+-")
    return (name or f"{grader.type}-{index + 1}")[:80]


ABLATIONS = ("none", "with-without")


def indicators(graders: list[Grader], ablation: str = "none") -> list[int]:
    """The graders `--ablation with-without` reports as a "plugin fired" indicator and never
    scores, in either arm: the with-only ones, unless every grader of the case is one."""
    marked = [i for i, g in enumerate(graders) if is_with_only(g)]
    return marked if ablation == "with-without" and len(marked) < len(graders) else []


def case_rules(
    graders: list[Grader], rubric: str | None = None, ablation: str = "none"
) -> tuple[str, dict[str, Any]]:
    """(polarity, expect): a negative when every scored grader asserts absence, else a
    positive. `rubric` names the frozen rubric the case's `llm` grader's criteria became.
    Under `ablation: none` a with-only grader is scored with the plugin and dropped in the
    no-plugin arm; under `with-without` it is an indicator (an info flag) in both."""
    llm = [g for g in graders if isinstance(g, LlmGrader)]
    if len(llm) > 1:
        raise GraderError(
            f"type: a second llm grader ('{llm[1].name}'); a rep asks one "
            "rubric, so write the criteria as one llm grader"
        )
    parts = [(condition_of(g, rubric), reason(g, i)) for i, g in enumerate(graders)]
    shown = indicators(graders, ablation)
    info = [{"not": cond, "reason": f"fired-{token}"[:80]} if absent
            else {**cond, "reason": f"fired-{token}"[:80]}
            for i, ((_, cond, absent), token) in enumerate(parts)
            if i in shown and "judge" not in cond]  # fmt: skip
    parts = [p for i, p in enumerate(parts) if i not in shown]
    marked = [reason(g, i) for i, g in enumerate(graders) if is_with_only(g) and not shown]
    extra: dict[str, Any] = {"with_only": marked} if marked and len(marked) < len(parts) else {}
    extra.update({"info": info} if info else {})
    if all(absent for (_, _, absent), _ in parts):
        forbidden = [{**cond, "reason": token} for (_, cond, _), token in parts]
        rule = forbidden[0] if len(forbidden) == 1 else {"any": forbidden}
        return "negative", {"fail": rule, **extra}
    axes: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    for (axis, cond, absent), token in parts:
        axes[axis].append({"not": cond, "reason": token} if absent else {**cond, "reason": token})
    if not axes["A"]:
        axes["A"], axes["B"] = axes["B"], []
    expect = {k.lower(): v[0] if len(v) == 1 else {"all": v} for k, v in axes.items() if v}
    return "positive", {**expect, **extra}


def criteria(graders: list[Grader]) -> str:
    """The criteria of the case's llm grader, or '' when it has none."""
    return next((g.criteria.strip() for g in graders if isinstance(g, LlmGrader)), "")

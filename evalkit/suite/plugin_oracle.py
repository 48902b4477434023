"""The reference behaviour of a `claude plugin eval` case, generated from its graders.

The oracle does what each grader looks for: creates the file a `file_exists` names, makes
the calls a `tool_used` or `tool_order` names (in that order), ends on a final message that
holds each literal `regex`, and has the judge answer YES for an `llm` grader. For each
grader there is one violation: the oracle without what that grader looks for (for an
absence grader, the oracle plus what it forbids), which must FAIL. A grader whose
satisfying behaviour cannot be derived (a non-literal regex, a non-literal input_match)
raises CannotGenerate naming it; the case then needs a `calibration:` block in its
sidecar `evalkit.yaml`. Reference behaviour only: never hashed, never part of a verdict.
"""

from __future__ import annotations

from typing import Any

from evalkit.checkers.rules.jsregex import js_test
from evalkit.checkers.rules.plugin_graders import (
    FileExistsGrader,
    Grader,
    LlmGrader,
    RegexGrader,
    ToolOrderGrader,
    ToolUsedGrader,
    condition_of,
    is_with_only,
    reason,
)
from evalkit.checkers.rules.reference import CannotGenerate, instance_of, literal_of

NEUTRAL = "I read the request and answered it."
REFERENCE_FILE = "{project}/evalkit-reference.txt"
DEFAULT_INPUTS: dict[str, dict[str, str]] = {
    "Skill": {"skill": "reference"},
    "Bash": {"command": "true"},
    "Read": {"file_path": REFERENCE_FILE},
    "Write": {"file_path": REFERENCE_FILE, "content": "reference\n"},
    "Edit": {"file_path": REFERENCE_FILE, "old_string": "a", "new_string": "b"},
    "Glob": {"pattern": "*"},
    "Grep": {"pattern": "reference"},
}
LITERAL_KEYS = {"Skill": "skill", "Bash": "command", "Read": "file_path", "Write": "content"}


def _literal(grader: RegexGrader | ToolUsedGrader | ToolOrderGrader, pattern: str) -> str:
    """The literal a pattern asks for; word boundaries at its ends hold once the literals are
    joined by spaces."""
    core = pattern.removeprefix("\\b").removesuffix("\\b") if len(pattern) > 4 else pattern
    found = literal_of(core)
    if found is None or not found:
        raise CannotGenerate(f"grader '{grader.name}': {pattern!r} is not a literal")
    return found


def _call(tool: str, literal: str | None) -> dict[str, Any]:
    """A call the CLI can run: the tool's usual input, the literal where a matcher looks."""
    data = dict(DEFAULT_INPUTS.get(tool, {}))
    if literal is not None:
        data[LITERAL_KEYS.get(tool, "input")] = literal
    return {"tool": {"name": tool, "input": data}}


def _presence(grader: Grader) -> tuple[list[dict[str, Any]], list[str], bool]:
    """(actions, final-message literals, judge YES) that make the grader's condition hold
    (for an absence grader: that make the forbidden thing happen)."""
    if isinstance(grader, FileExistsGrader):
        path = instance_of(grader.path)
        return [{"write": {"path": path, "content": "reference\n"}}], [], False
    if isinstance(grader, ToolUsedGrader):
        literal = None if grader.input_match is None else _literal(grader, grader.input_match)
        return [_call(grader.tool, literal) for _ in range(max(grader.min or 1, 1))], [], False
    if isinstance(grader, ToolOrderGrader):
        calls = [
            _call(r.tool, None if r.input_match is None else _literal(grader, r.input_match))
            for r in grader.refs()
        ]
        return calls, [], False
    if isinstance(grader, RegexGrader):
        return [], [_literal(grader, grader.pattern)], False
    assert isinstance(grader, LlmGrader)
    return [], [], True


def _absent(grader: Grader) -> bool:
    return condition_of(grader)[2]


def _actions(parts: list[tuple[list[dict[str, Any]], list[str], bool]]) -> list[dict[str, Any]]:
    actions = [a for acts, _, _ in parts for a in acts]
    literals = [lit for _, lits, _ in parts for lit in lits]
    actions.append({"final": " ".join(literals) if literals else NEUTRAL})
    if any(yes for _, _, yes in parts):
        actions.append({"judge": "YES"})
    return actions


def _final_ok(graders: list[Grader], final: str) -> None:
    """A generated final message must not hold what an absence regex forbids."""
    for grader in graders:
        if isinstance(grader, RegexGrader) and _absent(grader):
            if js_test(grader.pattern, grader.flags, final):
                raise CannotGenerate(
                    f"grader '{grader.name}': the generated final message holds what it forbids"
                )


def generated_calibration(graders: list[Grader], shown: list[int] | None = None) -> dict[str, Any]:
    """oracle, act and one violation per grader (none for an indicator, which is never
    scored); CannotGenerate names the grader."""
    present = [g for g in graders if not _absent(g)]
    oracle_parts = [_presence(g) for g in present]
    oracle = _actions(oracle_parts)
    _final_ok(graders, next(str(a["final"]) for a in oracle if "final" in a))
    violations: list[dict[str, Any]] = []
    for index, grader in enumerate(graders):
        if index in (shown or []):
            continue
        if _absent(grader):
            actions = _actions([*oracle_parts, _presence(grader)])
        else:
            actions = _actions([_presence(g) for g in present if g is not grader])
            if isinstance(grader, LlmGrader):
                actions.append({"judge": "NO"})
        violations.append({"name": f"violates-{reason(grader, index)}", "actions": actions})
    scored = [v for v, g in zip(violations, [g for i, g in enumerate(graders)
                                              if i not in (shown or [])], strict=True)
              if not is_with_only(g)]  # fmt: skip
    act = oracle if present else (scored or violations)[0]["actions"]
    return {"oracle": oracle, "act": act, "violations": violations}

"""Conditions scored only with the subject: in the no-plugin arm (`--variant none`) the
conditions a rule set names in `with_only` are dropped from its axes and flagged, since
what they look for (a plugin's skill, its tool) cannot happen there."""

from __future__ import annotations

from evalkit.checkers.rules.conditions import (
    AllCondition,
    AnyCondition,
    NegativeRules,
    Node,
    NotCondition,
    PositiveRules,
)

FLAG = "with-only-not-scored"


def _pruned(node: Node | None, drop: set[str]) -> Node | None:
    if node is None or node.reason in drop:
        return None
    if isinstance(node, AllCondition | AnyCondition):
        key = "all" if isinstance(node, AllCondition) else "any"
        kept = [c for c in (_pruned(c, drop) for c in getattr(node, key)) if c is not None]
        return node.model_copy(update={key: kept}) if kept else None
    return node


def without_subject(
    rules: PositiveRules | NegativeRules,
) -> tuple[PositiveRules | NegativeRules, list[str]]:
    """The rules the no-plugin arm scores, and the flags naming what was not scored. A
    negative keeps its rule when every condition of it is with-only."""
    drop = set(rules.with_only)
    if not drop:
        return rules, []
    flags = [f"{FLAG}:{token}" for token in rules.with_only]
    if isinstance(rules, PositiveRules):
        a, b = _pruned(rules.a, drop), _pruned(rules.b, drop)
        return rules.model_copy(update={"a": a, "b": b}), flags
    fail = _pruned(rules.fail, drop)
    if fail is None:
        return rules, []
    return rules.model_copy(update={"fail": fail}), flags


def idle_holds(rules: PositiveRules) -> bool:
    """Whether a positive's axes all hold for an agent that does nothing: every condition
    left is an absence (`not`)."""
    for axis in (rules.a, rules.b):
        parts = axis.all if isinstance(axis, AllCondition) else [axis] if axis else []
        if not all(isinstance(p, NotCondition) for p in parts):
            return False
    return True

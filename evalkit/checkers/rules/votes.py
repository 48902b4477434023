"""Which judge condition a rep's rules ask, and asking it by majority of several votes.

A rep asks the judge at most once (`JudgeGate`), so a rule set names one rubric. A
condition with `votes: 3` (the `llm` graders of `claude plugin eval` cases) asks three
times and keeps every raw answer in the one record, one per vote in order, so `verify`
replays each vote with the answer it got and a reader sees each one.
"""

from __future__ import annotations

from collections import Counter

from evalkit.checkers.rules.conditions import (
    AllCondition,
    AnyCondition,
    JudgeCondition,
    NegativeRules,
    Node,
    NotCondition,
    PositiveRules,
)
from evalkit.models import JudgeRecord, JudgeVote
from evalkit.scoring.judge import VOTE_SEPARATOR, Judge

DEFAULT = JudgeCondition(judge=True)


def _judges(node: Node | None) -> list[JudgeCondition]:
    if isinstance(node, JudgeCondition):
        return [node]
    if isinstance(node, AllCondition):
        return [j for c in node.all for j in _judges(c)]
    if isinstance(node, AnyCondition):
        return [j for c in node.any for j in _judges(c)]
    if isinstance(node, NotCondition):
        return _judges(node.not_)
    return []


def judge_of(rules: PositiveRules | NegativeRules) -> JudgeCondition:
    """The first judge condition of the rules, or the suite's rubric asked once."""
    nodes = [rules.a, rules.b] if isinstance(rules, PositiveRules) else [rules.fail]
    found = [j for n in nodes for j in _judges(n)]
    return found[0] if found else DEFAULT


def ask_votes(judge: Judge, prompt: str, votes: int) -> JudgeRecord:
    """One record: the majority answer of `votes` asks (an error when no answer has one),
    with every raw answer kept."""
    if votes == 1:
        return judge.ask(prompt)
    records = [judge.ask(prompt) for _ in range(votes)]
    kept = JudgeRecord(
        prompt_sha256=records[0].prompt_sha256,
        raw_output=VOTE_SEPARATOR.join(r.raw_output for r in records),
        votes=[JudgeVote(raw_output=r.raw_output, error=r.error) for r in records],
    )
    counted = Counter(r.answer for r in records if r.answer is not None)
    top = counted.most_common(1)
    if top and top[0][1] * 2 > votes:
        kept.answer = top[0][0]
        return kept
    errors = [r.error for r in records if r.error]
    kept.error = errors[0] if errors else "no-majority"
    return kept

"""`claude plugin eval` graders as rules conditions: JavaScript regexes in RE2, counted tool
calls, the trace, ordered calls, and an llm grader's three votes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from evalkit.checkers.rules.effects import Effects
from evalkit.checkers.rules.evaluate import JudgeGate, evaluate
from evalkit.checkers.rules.jsregex import JsRegexError, js_test, to_re2
from evalkit.checkers.rules.plugin_graders import (
    GraderError,
    case_rules,
    condition_of,
    parse_grader,
)
from evalkit.checkers.rules.votes import ask_votes
from evalkit.scoring.judge import VOTE_SEPARATOR, Judge, ReplayJudge, interpret
from evalkit.scoring.transcript import parse_lines
from tests.unit.checkers.test_plugin_runner_semantics import CONDITION, cli_lines
from tests.unit.checkers.test_rules import Run


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


# --------------------------------------------------------------------------- JavaScript regexes


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "hit"),
    [
        ("hello", "i", "HeLLo there", True),
        ("^b$", "m", "a\nb\nc", True),
        ("^b$", "", "a\nb\nc", False),
        ("a.b", "s", "a\nb", True),
        ("a.b", "", "a\nb", False),
        ("(?<word>hi)!", "g", "say hi!", True),
        ("caf\\u00e9", "", "un café", True),
        ("\\u{1F600}", "u", "smile \U0001f600", True),
        ("\\/api\\/v1", "", "GET /api/v1", True),
    ],
)
def test_a_javascript_regex_matches_in_re2_what_it_matches_in_javascript(
    pattern: str, flags: str, text: str, hit: bool
) -> None:
    assert js_test(pattern, flags, text) is hit


@pytest.mark.parametrize(
    ("pattern", "flags", "words"),
    [
        ("a(?=b)", "", "look-around"),
        ("a(?!b)", "", "look-around"),
        ("(?<=a)b", "", "look-around"),
        ("(?<!a)b", "", "look-around"),
        ("(a)\\1", "", "back-reference"),
        ("(?<x>a)\\k<x>", "", "back-reference"),
        ("a", "v", "flag"),
    ],
)
def test_a_construct_re2_cannot_run_is_refused_naming_it(
    pattern: str, flags: str, words: str
) -> None:
    with pytest.raises(JsRegexError, match=words):
        to_re2(pattern, flags)


def test_a_catastrophic_javascript_regex_returns_quickly_on_100_kb() -> None:
    started = time.monotonic()
    assert js_test("(a+)+$", "", "a" * 100_000 + "!") is False
    assert time.monotonic() - started < 1.0


# --------------------------------------------------------------------------- graders to rules


def graders(*data: dict[str, Any]) -> list[Any]:
    return [parse_grader(d) for d in data]


def test_tool_graders_score_axis_a_and_the_rest_axis_b() -> None:
    polarity, expect = case_rules(
        graders(
            {"name": "s", "type": "tool_used", "tool": "Skill"},
            {"name": "r", "type": "regex", "pattern": "done"},
        )
    )
    assert polarity == "positive"
    assert expect == {
        "a": {
            "plugin_eval": {
                "grader": "tool_used",
                "tool": {"tool": "Skill"},
                "min": 1,
                "max": None,
            },
            "reason": "s",
        },
        "b": {
            "plugin_eval": {
                "grader": "regex",
                "pattern": "done",
                "flags": "",
                "target": "last_message",
            },
            "reason": "r",
        },
        "with_only": ["s"],
    }


def test_a_case_of_absence_graders_only_is_a_negative_failing_on_any() -> None:
    polarity, expect = case_rules(
        graders(
            {"name": "n", "type": "tool_used", "tool": "Skill", "min": 0, "max": 0},
            {"name": "f", "type": "file_exists", "path": "*.md", "exists": False},
        )
    )
    assert polarity == "negative"
    assert [c["reason"] for c in expect["fail"]["any"]] == ["n", "f"]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"name": "b", "type": "baseline"}, "baseline"),
        ({"name": "s", "type": "smell"}, "not a grader type"),
        ({"name": "t", "type": "tool_used"}, "tool"),
        ({"name": "c", "type": "regex", "pattern": "x", "colour": 1}, "colour"),
        ({"name": "n", "type": "regex", "pattern": "x", "negate": True}, "negate"),
        ({"name": "f", "type": "regex", "pattern": "x", "flags": "q"}, "flags"),
        ({"name": "m", "type": "regex", "pattern": "x", "match": "some"}, "match"),
        ({"type": "regex", "pattern": "x"}, "name"),
    ],
)
def test_a_grader_evalkit_cannot_honour_is_refused(data: dict[str, Any], words: str) -> None:
    with pytest.raises(GraderError, match=words):
        parse_grader(data)


# --------------------------------------------------------------------------- new conditions


def test_tool_used_counts_calls_between_min_and_max(run: Run) -> None:
    for _ in range(3):
        run.called("Skill", skill="greeter:hello")
    assert run.eval({"tool": {"name": "Skill", "min": 2, "max": 3}}).value
    assert not run.eval({"tool": {"name": "Skill", "min": 4}}).value
    assert not run.eval({"tool": {"name": "Skill", "min": 1, "max": 2}}).value
    assert not run.eval({"tool": {"name": "Skill", "input": "bye", "min": 1}}).value


def test_tool_order_holds_only_for_calls_in_that_order(tmp_path: Path) -> None:
    lines = cli_lines(
        [("Read", "t1")], [("Skill", "t2")], inputs={"t2": {"skill": "greeter:hello"}}
    )
    transcript = parse_lines(lines)
    order = {
        "name": "o",
        "type": "tool_order",
        "before": "Read",
        "after": {"tool": "Skill", "input_match": "hello"},
    }
    reverse = {"name": "r", "type": "tool_order", "before": "Skill", "after": "Read"}
    other = {
        "name": "x",
        "type": "tool_order",
        "before": "Read",
        "after": {"tool": "Skill", "input_match": "bye"},
    }

    def holds(data: dict[str, Any]) -> bool | None:
        condition = CONDITION.validate_python(condition_of(parse_grader(data))[1])
        effects = Effects(tmp_path, {}, transcript)
        return evaluate(condition, effects, JudgeGate(lambda: False)).value

    assert holds(order) is True
    assert holds(reverse) is False
    assert holds(other) is False


@pytest.mark.parametrize("match", ["not_contains", "count:0"])
def test_a_regex_that_must_not_match_is_an_absence(match: str) -> None:
    data = {"name": "quiet", "type": "regex", "pattern": "hello", "match": match}
    spec = {"grader": "regex", "pattern": "hello", "flags": "", "target": "last_message"}
    assert condition_of(parse_grader(data)) == ("B", {"plugin_eval": spec}, True)


def test_a_trace_pattern_sees_tool_inputs_the_final_message_never_shows(run: Run) -> None:
    run.called("Bash", command="make lint")
    run.said("All good.")
    assert run.eval({"trace": '"command":"make lint"'}).value
    assert not run.eval({"final": "make lint"}).value


class Votes(Judge):
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)

    def ask(self, prompt: str) -> Any:
        return interpret(prompt, self.answers.pop(0))


def test_three_votes_decide_by_majority_and_keep_every_answer() -> None:
    record = ask_votes(Votes("YES", "NO - too long", "YES, fine"), "rubric", 3)
    assert record.answer == "YES"
    assert record.raw_output.split(VOTE_SEPARATOR) == ["YES", "NO - too long", "YES, fine"]
    split = ask_votes(Votes("YES", "maybe", "NO"), "rubric", 3)
    assert split.answer is None and split.error is not None


def test_a_two_to_one_vote_replays_vote_by_vote_to_the_same_answer() -> None:
    record = ask_votes(Votes("YES", "NO", "YES\nNo reason to doubt it."), "rubric", 3)
    assert [v.raw_output for v in record.votes] == ["YES", "NO", "YES\nNo reason to doubt it."]
    replayed = ask_votes(ReplayJudge(record), "rubric", 3)
    assert (replayed.answer, replayed.error) == ("YES", None)
    assert replayed.votes == record.votes


def test_a_record_kept_in_the_joined_form_is_split_only_where_every_part_is_an_answer() -> None:
    joined = ask_votes(Votes("YES", "NO", "YES"), "rubric", 3)
    old = joined.model_copy(update={"votes": []})
    assert ask_votes(ReplayJudge(old), "rubric", 3).answer == "YES"
    text = VOTE_SEPARATOR.join(["YES", "NO", "maybe"])
    prose = old.model_copy(update={"raw_output": text})
    assert ask_votes(ReplayJudge(prose), "rubric", 3).error == "judge-answer-contradictory"

"""The rules' order conditions over a rep's timeline: `ran`, `after: {last: ...}`, `order`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from evalkit.checkers.rules.conditions import Condition, Node
from evalkit.checkers.rules.effects import Effects
from evalkit.checkers.rules.evaluate import JudgeGate, Outcome, evaluate
from evalkit.models import InitEvent, ResultEvent, ToolCall, Transcript
from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.observed import ObservedRun
from evalkit.scoring.treehash import tree_hash

CONDITION: TypeAdapter[Node] = TypeAdapter(Condition)
CHECKS_AFTER_CHANGE = {
    "ran": {"script": "bin/test", "ok": True},
    "after": {"last": {"file": {"written": "invoice/**"}}},
}


class Rep:
    """A fabricated rep whose events sit on transcript lines, two lines per tool call."""

    def __init__(self, tmp_path: Path) -> None:
        self.fixture = tmp_path / "fixture"
        self.sandbox = tmp_path / "sandbox"
        for root in (self.fixture, self.sandbox / "project"):
            (root / "invoice").mkdir(parents=True)
            (root / "invoice" / "totals.py").write_text("old\n")
        self.transcript = Transcript(result=ResultEvent(result="Done."))
        self.runs: list[ObservedRun] | None = []
        self.line = 2

    def call(self, name: str, **data: Any) -> None:
        self.transcript.tool_calls.append(
            ToolCall(
                id=str(self.line),
                name=name,
                input=data,
                result="ok",
                line=self.line,
                result_line=self.line + 1,
            )
        )
        self.line += 2

    def edit(self, through: str = "Edit") -> None:
        (self.sandbox / "project" / "invoice" / "totals.py").write_text("new\n")
        if through:
            self.call(through, file_path=str(self.sandbox / "project" / "invoice" / "totals.py"))

    def bin_test(self, exit_code: int = 0, placed: bool = True, tree: bool = True) -> None:
        """A Bash call whose command ran bin/test by some spelling the transcript hides; its
        end tree taken of the project as it is then, as the wrapper takes it."""
        start = self.line + 1 if placed else None
        assert self.runs is not None
        ended = tree_hash(str(self.sandbox / "project"), SKIPPED_NAMES) if tree else None
        self.runs.append(
            ObservedRun("bin/test", "/p", (), start, self.line + 1, exit_code, end_tree=ended)
        )
        self.call("Bash", command="make check")

    def eval(self, data: dict[str, Any]) -> Outcome:
        effects = Effects(
            self.sandbox, {"project": self.fixture}, self.transcript, self.runs, ("bin/test",)
        )
        return evaluate(CONDITION.validate_python(data), effects, JudgeGate(lambda: True))


@pytest.fixture
def rep(tmp_path: Path) -> Rep:
    return Rep(tmp_path)


def test_a_passing_run_after_the_last_edit_holds(rep: Rep) -> None:
    rep.edit()
    rep.bin_test()
    assert rep.eval(CHECKS_AFTER_CHANGE).value is True


def test_a_run_only_before_the_edit_does_not_hold_and_says_after_what(rep: Rep) -> None:
    rep.bin_test()
    rep.edit()
    got = rep.eval(CHECKS_AFTER_CHANGE)
    assert got.value is False
    assert got.tokens == ["ran:bin/test:after-last:file-written:invoice/**"]


def test_a_failing_run_after_the_edit_is_not_a_pass(rep: Rep) -> None:
    rep.edit()
    rep.bin_test(exit_code=1)
    assert rep.eval(CHECKS_AFTER_CHANGE).value is False
    assert rep.eval({"ran": "bin/test"}).value is True


def test_with_no_matching_write_every_run_counts(rep: Rep) -> None:
    rep.bin_test()
    assert rep.eval(CHECKS_AFTER_CHANGE).value is True


def test_a_file_changed_by_no_call_that_names_it_cannot_be_placed(rep: Rep) -> None:
    rep.bin_test()
    rep.edit(through="")
    rep.call("Bash", command="python3 tools/fix_totals.py")
    got = rep.eval(CHECKS_AFTER_CHANGE)
    assert got.value is None
    assert got.tokens == ["order-unplaced:file-written:invoice/**"]


def test_a_file_a_bash_call_writes_by_name_is_placed_at_that_call(rep: Rep) -> None:
    rep.bin_test()
    rep.edit(through="")
    rep.call("Bash", command="sed -i s/old/new/ invoice/totals.py")
    assert rep.eval(CHECKS_AFTER_CHANGE).value is False


def test_a_late_shell_change_to_a_file_an_edit_first_wrote_is_seen_late(rep: Rep) -> None:
    rep.edit()
    rep.bin_test()
    rep.call("Bash", command="sed -i s/new/newer/ invoice/totals.py")
    (rep.sandbox / "project" / "invoice" / "totals.py").write_text("newer\n")
    assert rep.eval(CHECKS_AFTER_CHANGE).value is False


def test_an_edit_of_a_file_that_was_there_is_no_creation_on_the_timeline(rep: Rep) -> None:
    rep.bin_test()
    rep.edit()
    created = {"ran": "bin/test", "after": {"last": {"file": {"created": "invoice/**"}}}}
    assert rep.eval(created).value is True  # nothing was created: every run counts


def test_a_file_condition_on_the_timeline_holds_its_content(rep: Rep) -> None:
    rep.bin_test()
    rep.edit()
    other = {"file": {"written": "invoice/**", "content": "absent"}}
    assert rep.eval({"ran": "bin/test", "after": {"last": other}}).value is True
    same = {"file": {"written": "invoice/**", "content": "new"}}
    assert rep.eval({"ran": "bin/test", "after": {"last": same}}).value is False


def test_a_run_without_a_place_leaves_after_undecided_but_still_ran(rep: Rep) -> None:
    rep.edit()
    rep.bin_test(placed=False)
    assert rep.eval(CHECKS_AFTER_CHANGE).value is None
    assert rep.eval({"ran": "bin/test"}).value is True


def test_ran_on_a_suite_that_observes_nothing_is_undecided(rep: Rep) -> None:
    rep.runs = None
    got = rep.eval({"ran": "bin/test"})
    assert (got.value, got.tokens) == (None, ["not-observed:bin/test"])


def test_ran_for_a_script_the_suite_does_not_observe_is_undecided(rep: Rep) -> None:
    got = rep.eval({"ran": "bin/lint"})
    assert (got.value, got.tokens) == (None, ["not-observed:bin/lint"])


def test_order_holds_only_in_that_order(rep: Rep) -> None:
    rep.call("Read", file_path="x")
    rep.edit()
    rep.bin_test()
    forward = {"order": [{"tool": "Read"}, {"file": {"written": "invoice/*"}}, {"ran": "bin/test"}]}
    backward = {"order": [{"ran": "bin/test"}, {"tool": "Read"}]}
    assert rep.eval(forward).value is True
    got = rep.eval(backward)
    assert got.value is False
    assert got.tokens == ["order:ran:bin/test>tool:Read"]


def test_overlapping_events_are_not_in_order(rep: Rep) -> None:
    rep.transcript.tool_calls.append(
        ToolCall(id="a", name="Read", input={}, result="ok", line=2, result_line=5)
    )
    rep.transcript.tool_calls.append(
        ToolCall(id="b", name="Grep", input={}, result="ok", line=3, result_line=4)
    )
    assert rep.eval({"order": [{"tool": "Read"}, {"tool": "Grep"}]}).value is False


@pytest.mark.parametrize(
    "data",
    [
        {"order": [{"final": "x"}, {"ran": "bin/test"}]},
        {"order": [{"ran": "bin/test"}]},
        {"ran": "bin/test", "after": {"last": {"judge": True}}},
        {"final": "x", "after": {"last": {"ran": "bin/test"}}},
    ],
)
def test_what_has_no_place_on_the_timeline_is_refused_when_it_loads(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        CONDITION.validate_python(data)


def test_a_replayed_rep_places_writes_by_the_folder_the_agent_ran_in(rep: Rep) -> None:
    ran_in = "/elsewhere/sandbox/project"
    rep.transcript.init = InitEvent(cwd=ran_in)
    (rep.sandbox / "project" / "invoice" / "totals.py").write_text("new\n")
    rep.call("Edit", file_path=f"{ran_in}/invoice/totals.py")
    rep.bin_test()
    assert rep.eval(CHECKS_AFTER_CHANGE).value is True


ON_FINAL_TREE = {"ran": {"script": "bin/test", "ok": True, "final": True}}


def test_a_passing_run_on_the_tree_handed_over_holds(rep: Rep) -> None:
    rep.edit()
    rep.bin_test()
    assert rep.eval(ON_FINAL_TREE).value is True


def test_a_change_by_no_call_after_the_run_leaves_it_off_the_final_tree(rep: Rep) -> None:
    rep.edit()
    rep.bin_test()
    (rep.sandbox / "project" / "invoice" / "totals.py").write_text("changed by a script\n")
    assert rep.eval(ON_FINAL_TREE).value is False
    assert rep.eval({"ran": {"script": "bin/test", "final": False}}).value is True


def test_a_run_with_no_end_tree_never_counts_on_the_final_tree(rep: Rep) -> None:
    rep.edit()
    rep.bin_test(tree=False)
    assert rep.eval(ON_FINAL_TREE).value is False

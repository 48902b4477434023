"""The rules checker's condition language, evaluated over fabricated runs, rule by rule."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from evalkit.checkers.rules.conditions import Condition, Node, PositiveRules
from evalkit.checkers.rules.effects import Effects, read_text
from evalkit.checkers.rules.evaluate import JudgeGate, Outcome, evaluate, skill_matches, token
from evalkit.checkers.rules.patterns import PatternError, compile_pattern, glob_matches, search
from evalkit.checkers.rules.reference import CannotGenerate, generate, instance_of, literal_of
from evalkit.models import HookEvent, ResultEvent, ToolCall, Transcript
from evalkit.scoring.frontmatter import front_matter

CONDITION: TypeAdapter[Node] = TypeAdapter(Condition)


def cond(data: dict[str, Any]) -> Node:
    return CONDITION.validate_python(data)


class Run:
    """A fabricated rep: a fixture folder, the sandbox's copy after the agent, a transcript."""

    def __init__(self, tmp_path: Path) -> None:
        self.fixture = tmp_path / "fixture"
        self.sandbox = tmp_path / "sandbox"
        (self.fixture).mkdir()
        (self.sandbox / "project").mkdir(parents=True)
        self.transcript = Transcript(result=ResultEvent(result="Done."))
        self.asked = 0
        self.answer: bool | str = True

    def existing(self, rel: str, text: str) -> None:
        for root in (self.fixture, self.sandbox / "project"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)

    def wrote(self, rel: str, text: str) -> None:
        path = self.sandbox / "project" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def called(
        self, name: str, result: str | None = "ok", is_error: bool | None = None, **data: Any
    ) -> None:
        self.transcript.tool_calls.append(
            ToolCall(
                id=str(len(self.transcript.tool_calls)),
                name=name,
                input=data,
                result=result,
                is_error=is_error,
            )
        )

    def said(self, final: str) -> None:
        self.transcript.result = ResultEvent(result=final)

    def judge(self) -> bool | str:
        self.asked += 1
        return self.answer

    def eval(self, data: dict[str, Any], judge_allowed: bool = True) -> Outcome:
        gate = JudgeGate(self.judge)
        gate.allowed = judge_allowed
        effects = Effects(self.sandbox, {"project": self.fixture}, self.transcript)
        return evaluate(cond(data), effects, gate)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


# --------------------------------------------------------------------------- loading


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"bash": "(a)\\1"}, "RE2"),
        ({"final": "(?<=x)y"}, "RE2"),
        ({"file": {"created": "a", "changed": "b"}}, "exactly one of"),
        ({"file": {"created": "../outside"}}, "without '..'"),
        ({"wat": 1}, "needs exactly one of"),
        ({"bash": "x", "final": "y"}, "needs exactly one of"),
        ({"bash": "x", "reason": "has spaces"}, "pattern"),
        ({"judge": False}, "True"),
    ],
)
def test_a_bad_condition_is_refused_when_it_loads(data: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        cond(data)
    assert words in str(caught.value)


def test_info_conditions_never_ask_the_judge() -> None:
    with pytest.raises(ValidationError, match="never ask the judge"):
        PositiveRules.model_validate({"a": {"bash": "x"}, "info": [{"judge": True}]})


def test_re2_refuses_what_it_cannot_run_in_linear_time() -> None:
    with pytest.raises(PatternError, match="not accepted by RE2"):
        compile_pattern("(?=a)")


def test_a_catastrophic_pattern_still_finishes_on_hostile_text() -> None:
    # A backtracking engine takes about 2**40 steps here; RE2 one pass.
    assert not search("^(a+)+$", "a" * 40 + "b")


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("docs/adr/*.md", "docs/adr/0002-x.md", True),
        ("docs/adr/*.md", "docs/adr/old/0002-x.md", False),
        ("**/*.md", "a.md", True),
        ("**/*.md", "a/b/c.md", True),
        ("**", "anything/at/all", True),
        ("a?.md", "ab.md", True),
        ("a.md", "aXmd", False),
    ],
)
def test_globs_name_whole_relative_paths(glob: str, path: str, hit: bool) -> None:
    assert glob_matches(glob, path) is hit


# --------------------------------------------------------------------------- leaves


def test_a_created_file_is_matched_by_glob_content_and_front_matter(run: Run) -> None:
    run.existing("notes/old.md", "---\nsummary: old\n---\n")
    run.wrote("notes/new.md", "---\nsummary: fresh\ntags: [http, retry]\n---\n\nbody 429\n")
    assert run.eval({"file": {"created": "notes/*.md"}}).value
    assert run.eval({"file": {"created": "notes/*.md", "content": "429"}}).value
    assert run.eval({"file": {"created": "notes/*.md", "front_matter": {"tags": "^retry$"}}}).value
    assert not run.eval({"file": {"created": "notes/*.md", "front_matter": {"owner": ""}}}).value
    assert not run.eval({"file": {"changed": "notes/*.md"}}).value
    assert run.eval({"file": {"created": "notes/*.md"}}).tokens == ["file-created:notes/new.md"]


def test_changed_deleted_and_written_compare_with_the_fixture(run: Run) -> None:
    run.existing("CHANGELOG.md", "# Changelog\n")
    run.existing("gone.txt", "x")
    (run.sandbox / "project" / "gone.txt").unlink()
    assert not run.eval({"file": {"written": "CHANGELOG.md"}}).value
    run.wrote("CHANGELOG.md", "# Changelog\n\n- an entry\n")
    assert run.eval({"file": {"changed": "CHANGELOG.md"}}).value
    assert run.eval({"file": {"written": "CHANGELOG.md"}}).value
    assert run.eval({"file": {"deleted": "gone.txt"}}).value


def test_a_link_the_agent_made_is_never_followed(run: Run, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("TOKEN")
    os.symlink(secret, run.sandbox / "project" / "note.md")
    got = run.eval({"file": {"created": "note.md", "content": "TOKEN"}})
    assert got.value is None and got.tokens[0].startswith("file-unreadable:note.md")
    with pytest.raises(Exception, match="not-a-regular-file"):
        read_text(run.sandbox / "project" / "note.md")


def test_front_matter_is_read_safely() -> None:
    assert front_matter("---\na: 1\n---\nbody") == {"a": 1}
    assert front_matter("---\na: &x [1]\nb: *x\n---\n") is None
    assert front_matter("---\n!!python/object:os.system x\n---\n") is None
    assert front_matter("no front matter") is None


def test_tool_calls_match_by_name_input_and_outcome(run: Run) -> None:
    run.called("Read", file_path="/s/project/docs/adr/0001.md")
    run.called("Edit", result="<tool_use_error>no</tool_use_error>", is_error=True, file_path="x")
    assert run.eval({"tool": {"name": "Read", "input": "docs/adr/"}}).value
    assert not run.eval({"tool": {"name": "Read", "input": "src/"}}).value
    assert run.eval({"tool": {"name": "Ed*", "ok": False}}).value
    assert not run.eval({"tool": {"name": "Edit", "ok": True}}).value


def test_bash_commands_match_by_pattern_and_exit(run: Run) -> None:
    run.called("Bash", result="Exit code 1\nboom", is_error=True, command="bin/test -q")
    assert run.eval({"bash": r"(^|\s)bin/test\b"}).value
    assert not run.eval({"bash": {"command": "bin/test", "ok": True}}).value
    run.called("Bash", result="3 passed", is_error=False, command="./bin/test")
    assert run.eval({"bash": {"command": "bin/test", "ok": True}}).value


@pytest.mark.parametrize(
    ("wanted", "called", "hit"),
    [
        ("os-adr:find", "os-adr:find", True),
        ("os-adr:find", "find", True),
        ("find", "os-adr:find", True),
        ("os-adr:find", "other:find", False),
        ("os-adr:*", "os-adr:create", True),
    ],
)
def test_skills_match_as_the_cli_resolves_them(wanted: str, called: str, hit: bool) -> None:
    assert skill_matches(wanted, called) is hit


def test_hooks_and_the_final_message(run: Run) -> None:
    run.transcript.hooks.append(
        HookEvent(
            subtype="hook_response",
            hook_event="SessionStart",
            outcome="success",
            output="my-plugin: hello",
        )
    )
    run.said("All 12 tests pass.")
    assert run.eval({"hook": "SessionStart"}).value
    assert run.eval({"hook": {"event": "SessionStart", "output": "^my-plugin"}}).value
    assert not run.eval({"hook": "Stop"}).value
    assert run.eval({"final": r"\d+ tests pass"}).value


def test_an_agent_written_path_becomes_a_safe_reason_token() -> None:
    assert token("a b;c\td\n.md") == "a_b_c_d_.md"


# --------------------------------------------------------------------------- combining


def test_all_any_and_not_short_circuit_left_to_right(run: Run) -> None:
    run.called("Bash", result="", is_error=False, command="make lint")
    assert run.eval({"any": [{"bash": "lint"}, {"bash": "test"}]}).value
    got = run.eval({"all": [{"bash": "lint"}, {"bash": "test", "reason": "ran-tests"}]})
    assert (got.value, got.tokens) == (False, ["ran-tests"])
    got = run.eval({"not": {"bash": "lint"}})
    assert (got.value, got.tokens) == (False, ["not-bash"])


def test_the_judge_is_asked_last_and_only_when_nothing_else_decided(run: Run) -> None:
    run.wrote("note.md", "x")
    assert run.eval({"any": [{"judge": True}, {"file": {"created": "*.md"}}]}).value
    assert run.eval({"all": [{"judge": True}, {"file": {"created": "*.txt"}}]}).value is False
    assert run.asked == 0
    assert run.eval({"any": [{"judge": True}, {"file": {"created": "*.txt"}}]}).value
    assert run.asked == 1


def test_a_judge_not_yet_allowed_leaves_the_condition_pending(run: Run) -> None:
    got = run.eval({"any": [{"file": {"created": "*.md"}}, {"judge": True}]}, judge_allowed=False)
    assert got.value is None and got.pending and run.asked == 0


def test_an_undecidable_part_matters_only_where_the_result_depends_on_it(
    run: Run, tmp_path: Path
) -> None:
    os.symlink(tmp_path / "nowhere", run.sandbox / "project" / "note.md")
    unreadable = {"file": {"created": "*.md", "content": "x"}}
    run.called("Bash", result="", is_error=False, command="bin/test")
    assert run.eval({"any": [unreadable, {"bash": "bin/test"}]}).value is True
    assert run.eval({"all": [unreadable, {"bash": "nope"}]}).value is False
    assert run.eval({"any": [unreadable, {"bash": "nope"}]}).value is None
    run.answer = "judge-timeout"
    got = run.eval({"judge": True})
    assert got.value is None and got.tokens == ["judge-error:judge-timeout"]


# --------------------------------------------------------------------------- generated actions


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [("bin/test", "bin/test"), (r"a\.b", "a.b"), ("a.b", None), (r"\bx", None), ("", "")],
)
def test_only_literal_patterns_have_one_string(pattern: str, literal: str | None) -> None:
    assert literal_of(pattern) == literal


def test_a_glob_has_an_instance_it_matches() -> None:
    for glob in ("docs/adr/*.md", "**/*.md", "notes/**/n?.txt", "**"):
        assert glob_matches(glob, instance_of(glob)), glob


def test_actions_are_generated_for_literal_and_glob_conditions_only() -> None:
    made = generate(cond({"all": [{"bash": "bin/test"}, {"file": {"created": "docs/*.md"}}]}))
    assert [type(a).__name__ for a in made] == ["BashAction", "WriteAction"]
    made = generate(cond({"any": [{"bash": r"\btest"}, {"skill": "os-adr:find"}]}))
    assert [type(a).__name__ for a in made] == ["SkillAction"]
    hopeless = [
        {"not": {"bash": "x"}},
        {"bash": "te.t"},
        {"file": {"created": "a", "content": "b+"}},
    ]
    for data in hopeless:
        with pytest.raises(CannotGenerate):
            generate(cond(data))

"""A plugin case's graders decide as the pinned `claude plugin eval` decides them: each test
plays one scripted turn the runner was measured on (`bench/vs_plugin_eval.py --graders`
runs the runner itself on the same turns) and asks evalkit's verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.checkers.rules.conditions import Condition, Node
from evalkit.checkers.rules.effects import Effects
from evalkit.checkers.rules.evaluate import JudgeGate, evaluate
from evalkit.checkers.rules.plugin_graders import condition_of, parse_grader
from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.selftest import run_case
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import load_suite
from tests.unit.suite.test_plugin_evals import case_yaml, plugin

CONDITION: TypeAdapter[Node] = TypeAdapter(Condition)
SIDECAR = "calibration:\n  oracle:\n  - final: reference\n"


def verdict(
    tmp_path: Path,
    graders: list[dict[str, Any]],
    steps: list[list[dict[str, Any]]],
    final: str = "Done.",
    without_subject: bool = False,
    execution: dict[str, Any] | None = None,
) -> str:
    """evalkit's verdict on one case played as `steps` (each a message's tool calls, sent
    at once) and a final message."""
    root = plugin(tmp_path)
    case = {
        "schema_version": "1.0",
        "name": "probe",
        "execution": {"prompt": "Do the thing.", **(execution or {})},
        "graders": graders,
    }
    folder = case_yaml(root / "evals", "probe", json.dumps(case)).parent
    (folder / "evalkit.yaml").write_text(SIDECAR)
    suite = load_suite(root)
    played = Script(
        steps=[Step(blocks=[ToolUseBlock(name=n, input=i) for n, i in
                            ((c["name"], c["input"]) for c in step)]) for step in steps],
        final_text=final,
    )  # fmt: skip
    cell = run_case(suite, suite.resolve("probe"),
                    SelfTestCase("probe", played, Expectation("PASS"),
                                 without_subject=without_subject), tmp_path / "run")  # fmt: skip
    return cell.verdict.verdict


def read(path: str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": f"{{project}}/{path}"}}


def write(path: str) -> dict[str, Any]:
    return {"name": "Write", "input": {"file_path": f"{{project}}/{path}", "content": "x\n"}}


ORDER = {"name": "read-then-write", "type": "tool_order", "before": "Read", "after": "Write"}


def test_tool_order_compares_the_first_call_of_each_side(tmp_path: Path) -> None:
    """Write, Read, Write: the first Write comes before the first Read; the runner FAILs it."""
    steps = [[write("a.txt")], [read("a.txt")], [write("b.txt")]]
    assert verdict(tmp_path, [ORDER], steps) == "FAIL"


def cli_lines(*messages: list[tuple[str, str]], inputs: dict[str, Any] | None = None) -> list[str]:
    """The pinned CLI's stream for messages of parallel calls: one assistant line per
    tool_use block (sharing the message id), then one user line per result."""
    lines = [json.dumps({"type": "system", "subtype": "init", "cwd": "/p", "session_id": "s"})]
    for n, message in enumerate(messages):
        for tool, use in message:
            block = {
                "type": "tool_use",
                "id": use,
                "name": tool,
                "input": (inputs or {}).get(use, {"file_path": "a"}),
            }
            lines.append(json.dumps({"type": "assistant", "message": {
                "id": f"msg{n}", "role": "assistant", "content": [block]}}))  # fmt: skip
        for _, use in message:
            result = {"type": "tool_result", "tool_use_id": use, "content": "ok"}
            lines.append(
                json.dumps({"type": "user", "message": {"role": "user", "content": [result]}})
            )
    lines.append(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                             "result": "Done."}))  # fmt: skip
    return lines


def test_tool_order_orders_calls_sent_in_one_message_as_the_stream_does(tmp_path: Path) -> None:
    transcript = parse_lines(cli_lines([("Read", "t1"), ("Write", "t2")]))
    condition = CONDITION.validate_python(condition_of(parse_grader(ORDER))[1])
    got = evaluate(condition, Effects(tmp_path, {}, transcript), JudgeGate(lambda: False))
    assert got.value is True


def test_input_match_reads_compact_json_in_the_order_the_input_was_given(tmp_path: Path) -> None:
    used = {"name": "wrote-b-first", "type": "tool_used", "tool": "Write",
            "input_match": '^\\{"file_path":"[^"]*b\\.txt","content":"x\\\\n"\\}$'}  # fmt: skip
    assert verdict(tmp_path, [used], [[write("b.txt")]]) == "PASS"


def test_input_match_sees_numbers_as_javascript_writes_them(tmp_path: Path) -> None:
    used = {"name": "n", "type": "tool_used", "tool": "Probe", "input_match": '"n":1,"m":1e\\+21'}
    steps = [[{"name": "Probe", "input": {"n": 1.0, "m": 1e21}}]]
    assert verdict(tmp_path, [used], steps) == "PASS"


def test_a_trace_regex_matches_the_cli_s_own_events(tmp_path: Path) -> None:
    grader = {"name": "t", "type": "regex", "target": "trace",
              "pattern": '"type":"system","subtype":"init"'}  # fmt: skip
    assert verdict(tmp_path, [grader], [[read("a.txt")]]) == "PASS"


def test_a_case_that_gives_no_limits_gets_the_runner_s_ten_turns_and_300_s(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path)
    case = {"schema_version": "1.0", "name": "probe", "execution": {"prompt": "Do it."},
            "graders": [{"name": "n", "type": "tool_used", "tool": "Read"}]}  # fmt: skip
    case_yaml(root / "evals", "probe", json.dumps(case))
    launch = load_suite(root).resolve("probe").scenario.launch
    assert launch is not None
    assert (launch.max_turns, launch.timeout, launch.reps) == (10, 300, None)


def test_an_unmarked_skill_grader_is_not_scored_without_the_plugin(tmp_path: Path) -> None:
    graders = [{"name": "fired", "type": "tool_used", "tool": "Skill"},
               {"name": "said", "type": "regex", "pattern": "hello"}]  # fmt: skip
    assert verdict(tmp_path, graders, [], final="hello", without_subject=True) == "PASS"


@pytest.mark.parametrize(
    ("pattern", "flags", "final", "node"),
    [
        ("a\\sb", "", "a\u00a0b", True),
        ("a\\sb", "", "a\ufeffb", True),
        ("^b$", "m", "a\r\nb\r\nc", True),
        ("a.b", "", "a\rb", False),
        ("a.b", "", "a\u2028b", False),
        ("k", "i", "\u212a", False),
        ("^.$", "", "\U0001f600", False),
    ],
    ids=["nbsp", "bom", "crlf-m", "dot-cr", "dot-ls", "kelvin-i", "astral-no-u"],
)
def test_a_regex_grader_matches_as_javascript_matches(
    tmp_path: Path, pattern: str, flags: str, final: str, node: bool
) -> None:
    grader = {"name": "r", "type": "regex", "pattern": pattern, "flags": flags}
    assert verdict(tmp_path, [grader], [], final=final) == ("PASS" if node else "FAIL")

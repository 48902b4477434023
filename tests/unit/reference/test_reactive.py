"""Reactive script text: a scripted answer quotes what the real tools returned, or falls back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evalkit.models import Quote, Script, Step, TextBlock, ToolUseBlock
from evalkit.reference.fabricate import fabricate
from evalkit.reference.reactive import fill, latest_tool_result
from evalkit.reference.scripted_server import ScriptedServer
from tests.unit.reference.test_scripted_server import body, message

FIRST_ID = Quote(pattern=r"(?m)^(\d{4})\s", fallback="I found nothing to cite.")
FOUND = "0010  Accepted   Read queue figures\n0004  Accepted   Persist the queue\n"


def test_the_first_match_is_quoted_by_its_first_group() -> None:
    assert fill("Per ADR {quote}.", FIRST_ID, FOUND) == "Per ADR 0010."


def test_a_pattern_without_groups_quotes_the_whole_match() -> None:
    assert fill("saw {quote}", Quote(pattern=r"\d{4}", fallback="-"), "id 0042 here") == "saw 0042"


def test_no_match_says_the_fallback_instead() -> None:
    assert fill("Per ADR {quote}.", FIRST_ID, "no matching ADRs\n") == "I found nothing to cite."


def test_text_without_a_quote_is_left_alone() -> None:
    assert fill("Per ADR {quote}.", None, FOUND) == "Per ADR {quote}."


def _result(content: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": content}],
    }


def test_the_latest_tool_result_is_the_last_one_even_with_system_entries_after_it() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "task"}]},
        _result("0002  Accepted"),
        {"role": "assistant", "content": [{"type": "text", "text": "next"}]},
        _result([{"type": "text", "text": FOUND}]),
        {"role": "system", "content": "hook output 0009"},
    ]
    assert latest_tool_result(messages) == FOUND
    assert latest_tool_result(messages[:1]) == ""
    assert latest_tool_result("not a list") == ""


REACTIVE = Script(
    steps=[Step(blocks=[ToolUseBlock(name="Bash", input={"command": "adr-find x"})])],
    final_text="Per ADR {quote}, done.",
    final_quote=FIRST_ID,
)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(REACTIVE) as running:
        yield running


@pytest.mark.parametrize(
    ("tool_output", "said"),
    [(FOUND, "Per ADR 0010, done."), ("Exit code 2\nno code graph", "I found nothing to cite.")],
)
def test_the_server_answers_from_the_conversations_tool_result(
    server: ScriptedServer, tool_output: str, said: str
) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "task"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}],
        },
        _result(tool_output),
    ]
    answer = message(server, body(messages))
    assert [b["text"] for b in answer["content"]] == [said]


def test_a_reactive_step_text_quotes_the_previous_step_in_a_fabricated_run(tmp_path: Any) -> None:
    (tmp_path / "project").mkdir()
    script = Script(
        steps=[
            Step(blocks=[ToolUseBlock(name="Bash", input={"command": "printf '0007  x\\n'"})]),
            Step(blocks=[TextBlock(text="found {quote}", quote=FIRST_ID)]),
        ],
        final_text="Per ADR {quote}.",
        final_quote=FIRST_ID,
    )
    lines = fabricate(script, tmp_path, {}, "hook")
    assert any('"text": "found 0007"' in line for line in lines)
    assert '"result": "Per ADR 0007."' in lines[-1]

"""The scripted model spoken as the streamed Responses API: Claude Code's tool calls become
the shell commands Codex's model would send, step by step, and faults fail alike."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from evalkit.models import Script, Step, TextBlock, ToolUseBlock
from evalkit.reference.wire.responses import ResponsesServer, shell_command

SKILLS = Path("/rep/codex-home/skills")


def test_a_write_is_an_added_file_through_apply_patch() -> None:
    block = ToolUseBlock(name="Write", input={"file_path": "/v/a.md", "content": "one\ntwo\n"})
    command = shell_command(block, SKILLS)
    assert command.startswith("apply_patch <<'EVALKIT_PATCH_END'\n*** Begin Patch\n")
    assert "*** Add File: /v/a.md\n+one\n+two\n*** End Patch\n" in command


def test_an_edit_is_an_updated_file() -> None:
    block = ToolUseBlock(
        name="Edit", input={"file_path": "/p/x.rb", "old_string": "a", "new_string": "b"}
    )
    assert "*** Update File: /p/x.rb\n@@\n-a\n+b\n" in shell_command(block, SKILLS)


def test_a_skill_reads_its_skill_md_where_it_was_placed() -> None:
    block = ToolUseBlock(name="Skill", input={"skill": "os-vault:write"})
    assert shell_command(block, SKILLS) == "cat /rep/codex-home/skills/os-vault:write/SKILL.md"


def post(url: str, items: list[dict[str, Any]]) -> tuple[int, str]:
    body = json.dumps({"model": "m", "stream": True, "input": items}).encode()
    request = urllib.request.Request(url + "/v1/responses", body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as failed:
        return failed.code, failed.read().decode()


def done_items(stream: str) -> list[dict[str, Any]]:
    events = [json.loads(x[6:]) for x in stream.splitlines() if x.startswith("data: ")]
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


def test_steps_follow_the_calls_already_in_the_conversation() -> None:
    read = ToolUseBlock(name="Read", input={"file_path": "/p/a"})
    script = Script(steps=[Step(blocks=[TextBlock(text="Look."), read, read])], final_text="Ok.")
    with ResponsesServer(script, None, SKILLS) as server:
        status, first = post(server.base_url, [])
        calls = [i for i in done_items(first) if i["type"] == "function_call"]
        assert status == 200 and len(calls) == 2
        assert json.loads(calls[0]["arguments"]) == {"cmd": "cat /p/a"}
        _, again = post(server.base_url, [])
        assert len(done_items(again)) == 3, "a resent conversation is served the same step"
        outputs = [
            {"type": "function_call_output", "call_id": c["call_id"], "output": "x"} for c in calls
        ]
        _, last = post(server.base_url, calls + outputs)
        final = done_items(last)
        assert [i["type"] for i in final] == ["message"]
        assert final[0]["content"][0]["text"] == "Ok."


@pytest.mark.parametrize("fault", ["500", "429"])
def test_a_status_fault_fails_every_request(fault: str) -> None:
    with ResponsesServer(Script(), fault, SKILLS) as server:
        status, body = post(server.base_url, [])
    assert status == int(fault) and "scripted fault" in body


def test_the_record_counts_only_the_calls_codex_shows_in_its_stream() -> None:
    from evalkit.models import ServedRequest
    from evalkit.scoring.streams.items import call_item, text_item

    bash = ToolUseBlock(name="Bash", input={"command": "ls"})
    script = Script(steps=[Step(blocks=[TextBlock(text="Look."), bash, bash])], final_text="Ok.")
    with ResponsesServer(script, None, SKILLS) as server:
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "t"}]}
        _, first = post(server.base_url, [user])
        sent = done_items(first)
        run, refused = [i for i in sent if i["type"] == "function_call"]
        outputs = [
            {"type": "function_call_output", "call_id": run["call_id"], "output": "ran"},
            {"type": "function_call_output", "call_id": refused["call_id"],
             "output": "exec_command failed: CreateProcess { message: \"Rejected\" }"},
        ]  # fmt: skip
        post(server.base_url, [user, *sent, *outputs])
        record = [ServedRequest.model_validate_json(x) for x in
                  (server.served_record() or "").splitlines()]  # fmt: skip
    assert [r.kind for r in record] == ["turn", "turn"]
    assert record[0].items == [text_item("Look."), call_item()], "the refused call still counts"
    assert record[1].history == [record[0].served] and record[1].root == record[0].root

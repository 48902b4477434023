"""The scripted model spoken as Gemini's streamGenerateContent: Claude Code's tool calls
become Gemini's own tools, step by step, and a status fault fails every model request."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.wire.gemini import GeminiServer, gemini_call

STREAM = "/v1beta/models/m:streamGenerateContent?alt=sse"


def test_tool_calls_become_geminis_tools() -> None:
    skill = ToolUseBlock(name="Skill", input={"skill": "os-vault:write"})
    assert gemini_call(skill) == ("activate_skill", {"name": "write"})
    write = ToolUseBlock(name="Write", input={"file_path": "/v/a.md", "content": "x"})
    assert gemini_call(write) == ("write_file", {"file_path": "/v/a.md", "content": "x"})


def post(url: str, contents: list[dict[str, Any]], path: str = STREAM) -> tuple[int, str]:
    body = json.dumps({"contents": contents}).encode()
    request = urllib.request.Request(url + path, body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as failed:
        return failed.code, failed.read().decode()


def parts(stream: str) -> list[dict[str, Any]]:
    chunk = json.loads(stream.strip().removeprefix("data: "))
    return list(chunk["candidates"][0]["content"]["parts"])


def test_the_step_is_the_number_of_model_turns() -> None:
    bash = ToolUseBlock(name="Bash", input={"command": "ls"})
    with GeminiServer(Script(steps=[Step(blocks=[bash])], final_text="Ok.")) as server:
        _, first = post(server.base_url, [{"role": "user", "parts": [{"text": "go"}]}])
        assert parts(first) == [
            {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}
        ]
        model = {"role": "model", "parts": parts(first)}
        _, last = post(server.base_url, [model])
        assert parts(last) == [{"text": "Ok."}]
        status, side = post(server.base_url, [], "/v1beta/models/m:generateContent")
        assert status == 200 and server.requests[-1].side


def test_a_status_fault_fails_every_model_request() -> None:
    with GeminiServer(Script(), "500") as server:
        status, body = post(server.base_url, [])
    assert status == 500 and json.loads(body)["error"]["code"] == 500

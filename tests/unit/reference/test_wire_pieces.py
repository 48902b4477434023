"""The scan reads a Codex (Responses API) or Gemini request as it reads a Messages API one: a
word naming the measurement in what the world contributed is named by its channel, while the
user's own words (the Task) and the model's own turns are never read, and a tool's result is
not blamed for a word its own call named."""

from __future__ import annotations

from typing import Any

from evalkit.models import Script
from evalkit.reference.wire.gemini import GeminiServer
from evalkit.reference.wire.pieces import gemini_pieces, responses_pieces
from evalkit.reference.wire.responses import ResponsesServer
from evalkit.scoring.world.leaks import Scan
from evalkit.scoring.world.markers import Markers

SCAN = Scan(Markers(extra=["wombat", "numbat", "bilby", "quokka"]))


def _responses(**planted: str) -> dict[str, Any]:
    def text(role: str, value: str) -> dict[str, Any]:
        return {"type": "message", "role": role, "content": [{"type": "input_text", "text": value}]}

    return {
        "model": "gpt-5-codex",
        "tools": [{"type": "function", "name": "exec_command", "description": "Runs a command."}],
        "input": [
            text("developer", "You are a coding agent." + planted.get("system", "")),
            text("user", "<environment_context>\n  <cwd>/home/alex/src/app"
                 + planted.get("env", "") + "</cwd>\n</environment_context>"),
            text("developer", "a notes vault is available" + planted.get("hook", "")),
            text("user", "Please tidy the report module, the quokka one."),  # the Task
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Looking at the quokka code."}]},
            {"type": "function_call", "name": "exec_command", "call_id": "c1",
             "arguments": '{"cmd": "ls /nope-bilby"}'},
            {"type": "function_call_output", "call_id": "c1",
             "output": "ls: cannot access '/nope-bilby'" + planted.get("result", "")},
        ],
    }  # fmt: skip


def _gemini(**planted: str) -> dict[str, Any]:
    return {
        "systemInstruction": {"parts": [{"text": "You are Gemini." + planted.get("system", "")}]},
        "tools": [{"functionDeclarations": [{"name": "glob", "description": "Finds files."}]}],
        "contents": [
            {"role": "user", "parts": [
                {"text": "<session_context>\nWorkspace: /home/alex/src/app"
                 + planted.get("env", "") + "\n</session_context>"},
                {"text": "Please tidy the report module, the quokka one."},  # the Task
            ]},
            {"role": "model", "parts": [
                {"text": "Looking at the quokka code."},
                {"functionCall": {"id": "c1", "name": "run_shell_command",
                                  "args": {"command": "ls /nope-bilby"}}},
            ]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "c1", "name": "run_shell_command",
                "response": {"output": "ls: cannot access '/nope-bilby'"
                             + planted.get("result", "")}}}]},
        ],
    }  # fmt: skip


def test_a_clean_codex_request_carries_no_marker_whatever_the_task_and_the_model_said() -> None:
    assert SCAN.reasons(responses_pieces(_responses())) == []


def test_each_channel_of_a_codex_request_is_read_and_named() -> None:
    body = _responses(system=" wombat", env="/numbat", hook=" at ~/evalkit", result=" sandbox")
    assert SCAN.reasons(responses_pieces(body)) == [
        "marker:system-prompt:wombat",
        "marker:env-context:numbat",
        "marker:hook-output:evalkit",
        "marker:tool-result:sandbox",
    ]


def test_a_clean_gemini_request_carries_no_marker_whatever_the_task_and_the_model_said() -> None:
    assert SCAN.reasons(gemini_pieces(_gemini())) == []


def test_each_channel_of_a_gemini_request_is_read_and_named() -> None:
    body = _gemini(system=" wombat", env="/numbat", result=" fixture")
    assert SCAN.reasons(gemini_pieces(body)) == [
        "marker:system-prompt:wombat",
        "marker:env-context:numbat",
        "marker:tool-result:fixture",
    ]


def test_each_wires_server_reads_its_own_requests() -> None:
    """The scan is handed the server's own reader: a Codex or Gemini body read as a Messages
    API one would give nothing, and the planted word would pass unseen."""
    codex = ResponsesServer(Script(final_text="Done."))
    gemini = GeminiServer(Script(final_text="Done."))
    assert SCAN.reasons(codex.request_pieces(_responses(result=" calibration"))) == [
        "marker:tool-result:calibration"
    ]
    assert SCAN.reasons(gemini.request_pieces(_gemini(result=" calibration"))) == [
        "marker:tool-result:calibration"
    ]

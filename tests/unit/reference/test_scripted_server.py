"""The scripted model server, spoken to over HTTP the way the CLI speaks to it."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from evalkit.models import Script, Step, TextBlock, ToolUseBlock
from evalkit.reference.scripted_server import (
    FAULTS,
    RETRY_AFTER_SECONDS,
    SIDE_TEXT,
    ScriptedServer,
)

BIG_INPUT = {"file_path": "/tmp/x/notes.md", "content": "line with some words\n" * 20}

SCRIPT = Script(
    steps=[
        Step(
            blocks=[
                TextBlock(text="Writing two files at once."),
                ToolUseBlock(name="Write", input=BIG_INPUT),
                ToolUseBlock(name="Bash", input={"command": "echo hi"}),
            ]
        ),
        Step(blocks=[ToolUseBlock(name="Read", input={"file_path": "/tmp/x/notes.md"})]),
    ],
    final_text="All finished.",
)


def conversation(assistant_turns: int, results_per_turn: int = 1) -> list[dict[str, Any]]:
    """A conversation shaped like the CLI's: system entries between turns, tool results after."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "do the thing"}]},
        {"role": "system", "content": "environment"},
    ]
    for turn in range(assistant_turns):
        ids = [f"toolu_{turn}_{i}" for i in range(results_per_turn)]
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": i, "name": "Bash", "input": {}} for i in ids
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids
                ],
            }
        )
        messages.append({"role": "system", "content": "hook output"})
    return messages


def body(messages: list[dict[str, Any]], stream: bool = False, **extra: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "policy-test",
        "max_tokens": 1000,
        "messages": messages,
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    }
    if stream:
        request["stream"] = True
    request.update(extra)
    return request


def post(
    server: ScriptedServer,
    payload: dict[str, Any],
    path: str = "/v1/messages?beta=true",
    headers: dict[str, str] | None = None,
    timeout: float = 5,
) -> http.client.HTTPResponse:
    request = urllib.request.Request(
        server.base_url + path,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    response: http.client.HTTPResponse = urllib.request.urlopen(request, timeout=timeout)
    return response


def message(server: ScriptedServer, payload: dict[str, Any], **kw: Any) -> dict[str, Any]:
    with post(server, payload, **kw) as response:
        assert response.headers["Content-Type"] == "application/json"
        result: dict[str, Any] = json.loads(response.read())
        return result


def sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        data = json.loads(fields["data"])
        assert data["type"] == fields["event"]
        events.append((fields["event"], data))
    return events


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT) as running:
        yield running


# --------------------------------------------------------------------------- step selection


@pytest.mark.parametrize(
    ("turns", "expected"),
    [(0, ["text", "tool_use", "tool_use"]), (1, ["tool_use"]), (2, ["text"]), (5, ["text"])],
)
def test_step_is_the_number_of_assistant_messages(
    server: ScriptedServer, turns: int, expected: list[str]
) -> None:
    answer = message(server, body(conversation(turns)))
    assert [block["type"] for block in answer["content"]] == expected
    assert server.requests[-1].step == turns
    if turns >= len(SCRIPT.steps):
        assert answer["content"][0]["text"] == SCRIPT.final_text
        assert answer["stop_reason"] == "end_turn"
    else:
        assert answer["stop_reason"] == "tool_use"


def test_tool_results_outnumbering_steps_do_not_skip_ahead(server: ScriptedServer) -> None:
    messages = conversation(1, results_per_turn=3)
    results = sum(
        1
        for m in messages
        if isinstance(m["content"], list)
        for c in m["content"]
        if c["type"] == "tool_result"
    )
    assert results > len(SCRIPT.steps)
    answer = message(server, body(messages))
    assert answer["content"][0]["name"] == "Read"
    assert server.requests[-1].step == 1


def test_a_repeated_request_is_served_the_same_step(server: ScriptedServer) -> None:
    first = message(server, body(conversation(1)))
    again = message(server, body(conversation(1), stream=False))
    assert first["content"][0]["input"] == again["content"][0]["input"]
    assert [r.step for r in server.requests] == [1, 1]


@pytest.mark.parametrize(
    ("payload", "headers"),
    [
        ({"model": "claude-haiku-4-5", "max_tokens": 50, "messages": []}, {}),
        (body(conversation(0)), {"x-claude-code-agent-id": "a1b2c3"}),
    ],
    ids=["no-tools-key", "subagent"],
)
def test_side_requests_get_text_and_no_step(
    server: ScriptedServer, payload: dict[str, Any], headers: dict[str, str]
) -> None:
    answer = message(server, payload, headers=headers)
    assert answer["content"] == [{"type": "text", "text": SIDE_TEXT}]
    assert answer["model"] == payload["model"]
    assert server.requests[-1].side and server.requests[-1].step is None
    assert message(server, body(conversation(0)))["content"][1]["name"] == "Write"


def test_empty_tool_list_is_still_an_agent_step(server: ScriptedServer) -> None:
    answer = message(server, body(conversation(0), tools=[]))
    assert answer["content"][1]["name"] == "Write"
    assert not server.requests[-1].side


# --------------------------------------------------------------------------- message shapes


def test_non_streaming_answer_is_a_plain_message(server: ScriptedServer) -> None:
    answer = message(server, body(conversation(0), model="policy-oracle"))
    assert answer["type"] == "message" and answer["role"] == "assistant"
    assert answer["model"] == "policy-oracle"
    assert answer["id"].startswith("msg_")
    assert answer["stop_reason"] == "tool_use"
    write, bash = answer["content"][1:]
    assert (write["name"], write["input"]) == ("Write", BIG_INPUT)
    assert bash["input"] == {"command": "echo hi"}
    assert write["id"].startswith("toolu_") and write["id"] != bash["id"]
    assert answer["usage"]["input_tokens"] > 0 and answer["usage"]["output_tokens"] > 0
    log = server.requests[-1]
    assert (log.path, log.stream, log.model, log.status) == (
        "/v1/messages?beta=true",
        False,
        "policy-oracle",
        200,
    )


def test_ids_are_unique_across_answers(server: ScriptedServer) -> None:
    answers = [message(server, body(conversation(0))) for _ in range(3)]
    message_ids = {a["id"] for a in answers}
    tool_ids = {c["id"] for a in answers for c in a["content"] if c["type"] == "tool_use"}
    assert len(message_ids) == 3 and len(tool_ids) == 6


def test_stream_events_come_in_the_api_order(server: ScriptedServer) -> None:
    with post(server, body(conversation(0), stream=True)) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        events = sse_events(response.read().decode())
    names = [name for name, _ in events if name != "ping"]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    blocks = [data for name, data in events if name == "content_block_start"]
    assert [b["content_block"]["type"] for b in blocks] == ["text", "tool_use", "tool_use"]
    for index in range(3):
        mine = [n for n, d in events if d.get("index") == index]
        assert mine[0] == "content_block_start" and mine[-1] == "content_block_stop"
        assert set(mine[1:-1]) == {"content_block_delta"}
    opened = [n for n, _ in events].index
    assert opened("content_block_stop") < opened("message_delta")
    start = events[0][1]["message"]
    assert start["model"] == "policy-test" and start["id"].startswith("msg_")
    delta = next(d for n, d in events if n == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use" and delta["usage"]["output_tokens"] > 0


def test_streamed_tool_input_reassembles_to_the_script(server: ScriptedServer) -> None:
    with post(server, body(conversation(0), stream=True)) as response:
        events = sse_events(response.read().decode())
    parts: dict[int, list[str]] = {}
    text = ""
    for name, data in events:
        if name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "input_json_delta":
                parts.setdefault(data["index"], []).append(delta["partial_json"])
            else:
                assert delta["type"] == "text_delta"
                text += delta["text"]
    assert len(parts[1]) > 1, "a long input should arrive in several deltas"
    assert json.loads("".join(parts[1])) == BIG_INPUT
    assert json.loads("".join(parts[2])) == {"command": "echo hi"}
    assert text == "Writing two files at once."


# --------------------------------------------------------------------------- other paths


def test_other_requests_get_small_answers_and_no_step(server: ScriptedServer) -> None:
    head = urllib.request.Request(server.base_url + "/api/hello", method="HEAD")
    with urllib.request.urlopen(head, timeout=5) as response:
        assert response.status == 200
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(server.base_url + "/v1/models", timeout=5)
    assert missing.value.code == 404
    assert json.loads(missing.value.read())["type"] == "error"
    counted = json.loads(
        post(server, body(conversation(0)), path="/v1/messages/count_tokens?beta=true").read()
    )
    assert isinstance(counted["input_tokens"], int) and counted["input_tokens"] > 0
    assert server.requests == []
    assert server.other_requests == [
        "HEAD /api/hello",
        "GET /v1/models",
        "POST /v1/messages/count_tokens?beta=true",
    ]


# --------------------------------------------------------------------------- faults


def test_unknown_fault_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        ScriptedServer(SCRIPT, fault="teapot")


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("500", "api_error"),
        ("529", "overloaded_error"),
        ("401", "authentication_error"),
        ("429", "rate_limit_error"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_status_faults_answer_every_request_with_an_api_error(
    fault: str, kind: str, stream: bool
) -> None:
    assert fault in FAULTS
    with ScriptedServer(SCRIPT, fault=fault) as server:
        for turns in (0, 1):
            with pytest.raises(urllib.error.HTTPError) as failed:
                post(server, body(conversation(turns), stream=stream))
            assert failed.value.code == int(fault)
            error = json.loads(failed.value.read())
            assert error["type"] == "error" and error["error"]["type"] == kind
            assert error["error"]["message"]
    assert [(r.status, r.step) for r in server.requests] == [(int(fault), None)] * 2


def test_a_rate_limit_says_when_to_come_back() -> None:
    with ScriptedServer(SCRIPT, fault="429") as server:
        with pytest.raises(urllib.error.HTTPError) as failed:
            post(server, body(conversation(0)))
    assert failed.value.code == 429
    assert failed.value.headers["retry-after"] == str(RETRY_AFTER_SECONDS)


def test_latency_delays_every_answer_and_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALKIT_SCRIPTED_LATENCY", "0.3")
    with ScriptedServer(SCRIPT) as server:
        assert server.latency == 0.3
        began = time.monotonic()
        message(server, body(conversation(0)))
        assert time.monotonic() - began >= 0.3
    monkeypatch.setenv("EVALKIT_SCRIPTED_LATENCY", "soon")
    assert ScriptedServer(SCRIPT).latency == 0.0


def test_stop_cuts_a_latency_wait_short() -> None:
    server = ScriptedServer(SCRIPT, latency=30).start()
    failures: list[BaseException] = []

    def ask() -> None:
        try:
            message(server, body(conversation(0)), timeout=10)
        except Exception as exc:  # the connection drops: that is the point
            failures.append(exc)

    asking = threading.Thread(target=ask)
    asking.start()
    time.sleep(0.2)
    server.stop()
    asking.join(timeout=5)
    assert not asking.is_alive() and failures


def test_cut_stream_stops_inside_a_block() -> None:
    with ScriptedServer(SCRIPT, fault="cut") as server:
        response = post(server, body(conversation(0), stream=True))
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/event-stream"
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
    seen = cut.value.partial.decode()
    assert "message_start" in seen and "content_block_start" in seen
    assert "content_block_stop" not in seen and "message_stop" not in seen
    assert server.requests[0].status == 200 and server.requests[0].step is None


def test_cut_non_streaming_answer_is_truncated() -> None:
    with ScriptedServer(SCRIPT, fault="cut") as server:
        response = post(server, body(conversation(0)))
        assert response.status == 200
        with pytest.raises(http.client.IncompleteRead):
            response.read()


@pytest.mark.parametrize("stream", [True, False])
def test_hang_stalls_after_headers_until_stop(stream: bool) -> None:
    server = ScriptedServer(SCRIPT, fault="hang").start()
    outcome: list[object] = []
    response = post(server, body(conversation(0), stream=stream), timeout=10)
    assert response.status == 200

    def read() -> None:
        try:
            outcome.append(response.read())
        except (http.client.HTTPException, OSError) as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(0.3)
    assert reader.is_alive(), "the body should not arrive while hanging"
    server.stop()
    reader.join(3)
    assert not reader.is_alive(), "stop() must release a hanging answer"
    assert len(outcome) == 1 and isinstance(outcome[0], Exception), "a stall ends broken"
    deadline = time.monotonic() + 1.5
    while handler_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not handler_threads(), "the hanging handler thread must end too"


def handler_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "process_request_thread" in t.name]


def test_stop_is_idempotent_and_frees_the_port() -> None:
    server = ScriptedServer(SCRIPT).start()
    url = server.base_url
    assert url.startswith("http://127.0.0.1:")
    server.stop()
    server.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/api/hello", timeout=2)


def test_each_cli_version_is_served_the_script_its_user_agent_calls_for() -> None:
    other = Script(final_text="Nothing to do here.")

    def choose(version: str) -> Script:
        return other if version == "2.1.328" else SCRIPT

    with ScriptedServer(SCRIPT, choose=choose) as server:
        new = message(server, body(conversation(0)), headers={"User-Agent": "claude-cli/2.1.328"})
        old = message(server, body(conversation(0)), headers={"User-Agent": "claude-cli/2.1.327"})
        assert server.versions == ["2.1.328", "2.1.327"]
    assert new["content"] == [{"type": "text", "text": "Nothing to do here."}]
    assert old["content"][0] == {"type": "text", "text": "Writing two files at once."}


# --------------------------------------------------------------------------- by prompt


def test_a_conversation_is_served_the_script_keyed_by_its_prompts_digest() -> None:
    from evalkit.reference.scripted_server import prompt_digest

    greet, other = Script(final_text="greeted"), Script(final_text="default")
    opening = [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder/>"},
                                     {"type": "text", "text": "greet  the\nteam"}]},
    ]  # fmt: skip
    stranger = [{"role": "user", "content": "something else"}]
    with ScriptedServer(other, prompts={prompt_digest("greet the team"): greet}) as running:
        keyed = message(running, body(opening))["content"][0]["text"]
        unkeyed = message(running, body(stranger))["content"][0]["text"]
    assert (keyed, unkeyed) == ("greeted", "default")

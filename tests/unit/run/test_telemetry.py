"""A rep's telemetry receiver: it keeps the JSON log exports posted to it and nothing else,
and a rep's environment names no exporter but it."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from evalkit.run.agents.claude import Claude
from evalkit.run.agents.codex import Codex
from evalkit.run.telemetry import Receiver, inside_url, labelled_env, start_receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()
    yield got
    got.stop()


def _post(receiver: Receiver, path: str, body: bytes, kind: str = "application/json") -> int:
    host, port = receiver.address
    conn = http.client.HTTPConnection(host, port, timeout=5)
    conn.request("POST", path, body, {"Content-Type": kind})
    status = conn.getresponse().status
    conn.close()
    return status


def test_a_json_log_export_is_kept_as_one_line(receiver: Receiver) -> None:
    body = {"resourceLogs": [{"scopeLogs": []}]}
    assert _post(receiver, "/v1/logs", json.dumps(body, indent=2).encode()) == 200
    receiver.settle()
    assert [json.loads(x) for x in receiver.text().splitlines()] == [body]


def test_anything_but_a_json_log_export_is_refused_and_not_kept(receiver: Receiver) -> None:
    statuses = [
        _post(receiver, "/v1/traces", b"{}"),
        _post(receiver, "/v1/logs", b"\x0a\x00", "application/x-protobuf"),
        _post(receiver, "/v1/logs", b"{not json"),
        _post(receiver, "/v1/logs", b"[" * 100_000),
    ]
    assert statuses == [404, 415, 400, 400]
    assert receiver.text() == ""


def test_the_rep_environment_names_only_its_receiver(receiver: Receiver) -> None:
    suite_set = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://elsewhere:4318",
                 "OTEL_LOG_USER_PROMPTS": "1", "PATH": "/usr/bin"}  # fmt: skip
    caps = Claude.capabilities
    unconfined = labelled_env(caps, suite_set, receiver, unconfined=True)
    confined = labelled_env(caps, suite_set, receiver, unconfined=False)
    for env in (unconfined, confined):
        named = {k: v for k, v in env.items() if k.startswith("OTEL_") and "ENDPOINT" in k}
        assert list(named) == [caps.labels_endpoint]
        assert "OTEL_LOG_USER_PROMPTS" not in env and "OTEL_LOG_TOOL_DETAILS" not in env
    assert unconfined[caps.labels_endpoint] == receiver.url
    assert confined[caps.labels_endpoint] == inside_url()


def test_an_agent_without_labels_gets_no_receiver() -> None:
    assert start_receiver(Codex.capabilities, reachable=True) is None

"""A results folder exported as OpenTelemetry traces, checked against the real wire format: the
document is parsed strictly by the OTLP protobuf definitions (an unknown field fails), sent to a
local receiver, and compared with what `report` says of the same folder."""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from evalkit.errors import EvalkitError, RefusedError
from evalkit.exports.otlp import otlp_document, send_otlp, write_otlp_json
from evalkit.models import PlanCell
from evalkit.records.folder.results import append_row, read_rows
from evalkit.records.report.build import build_report
from evalkit.records.verify.record import verify_and_record
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from tests.conftest import REPO
from tests.unit.records.folder import context, record_rep

pytestmark = pytest.mark.heavy

P1, N1, ORACLE = "P1-L1-reporting", "N1-L1-reporting", "policy:oracle"
REPS = [
    (P1, 1, None, "PASS"),
    (N1, 1, "always-write", "FAIL"),
    (P1, 2, "cut-before-result", "ERROR"),
]
"""(scenario, rep, the self-test case it plays, the verdict it gets)"""
EVENT = "gen_ai.evaluation.result"


@pytest.fixture(scope="module")
def recorded(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A measurement folder of a PASS, a FAIL and an ERROR rep through the real recorder,
    verified, so its publishability is the one verify recorded."""
    work = tmp_path_factory.mktemp("otlp") / "work"
    ctx = context(suite, work, "rotlp1")
    record_plan(ctx, [PlanCell(scenario=P1, model=ORACLE, reps=2),
                      PlanCell(scenario=N1, model=ORACLE, reps=1)], "grid")  # fmt: skip
    for scenario, rep, case, _ in REPS:
        record_rep(ctx, scenario, ORACLE, rep, case)
    verify_and_record(suite, work)
    return work


@pytest.fixture
def work(recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the folder, with the suite found as every command finds it."""
    monkeypatch.setenv("EVALKIT_SUITE", str(REPO))
    return Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))


def _parsed(text: str) -> ExportTraceServiceRequest:
    return Parse(text, ExportTraceServiceRequest())


def _spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for rs in document["resourceSpans"]
        for scoped in rs["scopeSpans"]
        for span in scoped["spans"]
    ]


def _attrs(span: Any) -> dict[str, Any]:
    """A parsed span's (or event's) attributes by key, each as its one set value."""
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in span.attributes}


def _reps_by_verdict(message: ExportTraceServiceRequest) -> dict[str, Span]:
    spans = [s for rs in message.resource_spans for ss in rs.scope_spans for s in ss.spans]
    return {_attrs(s)["evalkit.verdict"]: s for s in spans if s.parent_span_id}


def _export(folder: Path, out: Path) -> tuple[int, ExportTraceServiceRequest]:
    count = write_otlp_json(folder, out)
    return count, _parsed(out.read_text(encoding="utf-8"))


def test_the_written_file_parses_strictly_as_an_otlp_trace_request(
    work: Path, tmp_path: Path
) -> None:
    count, message = _export(work, tmp_path / "traces.json")
    assert count == len(REPS), count
    assert len(message.resource_spans[0].scope_spans[0].spans) == len(REPS) + 1


def test_every_rep_is_one_span_under_the_folders_root_span(work: Path, tmp_path: Path) -> None:
    _, message = _export(work, tmp_path / "traces.json")
    spans = list(message.resource_spans[0].scope_spans[0].spans)
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1, len(roots)
    children = [s for s in spans if s.parent_span_id]
    assert all(s.parent_span_id == roots[0].span_id for s in children)
    assert all(s.trace_id == roots[0].trace_id for s in spans)
    assert sorted(_attrs(s)["evalkit.verdict"] for s in children) == ["ERROR", "FAIL", "PASS"]


def test_ids_are_lowercase_hex_of_otlp_json_lengths(work: Path) -> None:
    """OTLP/JSON writes ids as hex, not protobuf's base64 (which the strict parse would also
    accept), so the text itself is checked."""
    spans = _spans(otlp_document(work))
    ids = [(s["traceId"], 32) for s in spans] + [(s["spanId"], 16) for s in spans]
    ids += [(s["parentSpanId"], 16) for s in spans if "parentSpanId" in s]
    assert all(re.fullmatch(f"[0-9a-f]{{{n}}}", x) for x, n in ids)
    assert len({s["spanId"] for s in spans}) == len(spans)


def test_every_verdict_is_one_evaluation_event_scored_one_or_zero(
    work: Path, tmp_path: Path
) -> None:
    _, message = _export(work, tmp_path / "traces.json")
    scores = {}
    for verdict, span in _reps_by_verdict(message).items():
        events = [e for e in span.events if e.name == EVENT]
        assert len(events) == 1, (verdict, len(events))
        found = _attrs(events[0])
        assert found["gen_ai.evaluation.name"] == "evalkit.verdict"
        assert found["gen_ai.evaluation.score.label"] == verdict
        scores[verdict] = found.get("gen_ai.evaluation.score.value")
    assert scores == {"PASS": 1.0, "FAIL": 0.0, "ERROR": None}


def test_an_error_rep_has_error_status_and_no_score(work: Path, tmp_path: Path) -> None:
    _, message = _export(work, tmp_path / "traces.json")
    reps = _reps_by_verdict(message)
    error = reps["ERROR"]
    assert error.status.code == Status.STATUS_CODE_ERROR
    event = _attrs(error.events[0])
    assert "gen_ai.evaluation.score.value" not in event
    assert event["error.type"] == "no-result-line"
    assert event["gen_ai.evaluation.explanation"].split(";")[0] == "no-result-line"
    assert all(reps[v].status.code == Status.STATUS_CODE_UNSET for v in ("PASS", "FAIL"))


def test_the_root_span_says_what_report_says_of_the_folder(
    work: Path, suite: Suite, tmp_path: Path
) -> None:
    _, message = _export(work, tmp_path / "traces.json")
    root = next(s for s in message.resource_spans[0].scope_spans[0].spans if not s.parent_span_id)
    found = _attrs(root)
    said = build_report(suite, work).publishability
    assert root.name == "evalkit grid rotlp1"
    assert found["evalkit.suite"] == suite.name
    assert found["evalkit.publishable"] is said.publishable
    assert found["evalkit.verification"] == said.verification == "fresh"
    assert found["evalkit.publishability"] == said.verdict.replace(str(work.resolve()), work.name)
    assert found["evalkit.lock"] == "frozen"


def test_a_rep_span_names_its_model_agent_and_evalkit_facts(work: Path) -> None:
    rows = {(r.scenario, r.rep): r for r in read_rows(work / "results.tsv")}
    for span in _spans(otlp_document(work))[1:]:
        found = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        row = rows[(found["evalkit.scenario.id"], int(found["evalkit.rep"]))]
        assert found["gen_ai.request.model"] == ORACLE
        assert found["gen_ai.provider.name"] == found["gen_ai.system"] == "claude"
        assert found["evalkit.bundle_id"] == row.bundle_id
        assert found["evalkit.polarity"] == ("positive" if row.scenario == P1 else "negative")
        assert found["evalkit.level"] == "L1"
        assert (found["evalkit.axis.a"], found["evalkit.axis.b"]) == (row.a, row.b)
        assert "gen_ai.usage.input_tokens" not in found  # the scripted reps report no usage


def test_a_rep_span_ends_at_its_rows_recorded_time(work: Path) -> None:
    rows = {(r.scenario, r.rep): r for r in read_rows(work / "results.tsv")}
    for span in _spans(otlp_document(work))[1:]:
        row = rows[next((s, r) for s, r in rows if span["name"] == f"evalkit rep {s} {ORACLE} {r}")]
        end = int(datetime.fromisoformat(row.time).timestamp()) * 10**9
        assert int(span["endTimeUnixNano"]) == end
        assert end - int(span["startTimeUnixNano"]) == row.duration_ms * 10**6


def test_a_row_with_usage_carries_the_gen_ai_token_counts(work: Path) -> None:
    row = read_rows(work / "results.tsv")[0]
    append_row(work / "results.tsv", row.model_copy(update={"rep": 9, "input_tokens": 120,
                                                            "output_tokens": 30}))  # fmt: skip
    span = next(s for s in _spans(otlp_document(work)) if s["name"].endswith(" 9"))
    found = {a["key"]: a["value"] for a in span["attributes"]}
    assert found["gen_ai.usage.input_tokens"] == {"intValue": "120"}
    assert found["gen_ai.usage.output_tokens"] == {"intValue": "30"}


def test_the_spans_carry_only_ids_verdicts_and_reasons(work: Path) -> None:
    """No attribute beyond the named ones: nothing such as a Task or a transcript can ride
    along unnoticed."""
    allowed = re.compile(
        r"(service\.(name|version)|gen_ai\.(operation\.name|provider\.name|system|agent\.name"
        r"|request\.model|response\.model|usage\.(input|output)_tokens|evaluation\.(name"
        r"|score\.label|score\.value|explanation))|error\.type|evalkit\.[a-z_.]+)"
    )
    document = otlp_document(work)
    keys = {a["key"] for a in document["resourceSpans"][0]["resource"]["attributes"]}
    for span in _spans(document):
        keys |= {a["key"] for a in span["attributes"]}
        keys |= {a["key"] for e in span.get("events", []) for a in e["attributes"]}
    assert sorted(k for k in keys if not allowed.fullmatch(k)) == []
    assert str(work.resolve()) not in json.dumps(document)


def test_two_exports_of_one_folder_are_the_same_bytes(work: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", work / "traces.json"
    write_otlp_json(work, first)
    write_otlp_json(work, second)
    assert first.read_bytes() == second.read_bytes()


def test_an_export_is_refused_over_the_folders_results_file(work: Path) -> None:
    before = (work / "results.tsv").read_bytes()
    with pytest.raises(RefusedError):
        write_otlp_json(work, work / "results.tsv")
    assert (work / "results.tsv").read_bytes() == before


class _Receiver:
    """A local OTLP/HTTP stand-in: records each POST's path, content type and body, and
    answers with `status`."""

    def __init__(self, status: int = 200) -> None:
        self.posts: list[tuple[str, str, bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802  (the name http.server calls)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.posts.append((self.path, self.headers.get("Content-Type", ""), body))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def _serving(status: int = 200) -> Iterator[_Receiver]:
    found = _Receiver(status)
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy set in the environment would take the loopback POSTs elsewhere."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    with _serving() as found:
        yield found


def test_send_posts_json_to_the_collectors_traces_path(work: Path, receiver: _Receiver) -> None:
    count = send_otlp(work, receiver.base + "/")
    assert count == len(REPS)
    [(path, kind, body)] = receiver.posts
    assert (path, kind) == ("/v1/traces", "application/json")
    message = _parsed(body.decode("utf-8"))
    assert len(message.resource_spans[0].scope_spans[0].spans) == len(REPS) + 1


def test_an_endpoint_already_naming_the_traces_path_is_not_extended(
    work: Path, receiver: _Receiver
) -> None:
    send_otlp(work, receiver.base + "/v1/traces")
    assert [path for path, _, _ in receiver.posts] == ["/v1/traces"]


def test_a_non_2xx_answer_is_one_line_naming_the_status(work: Path) -> None:
    with _serving(status=500) as failing, pytest.raises(EvalkitError) as raised:
        send_otlp(work, failing.base)
    message = str(raised.value)
    assert "\n" not in message and "HTTP 500" in message, message


def test_a_refused_endpoint_is_one_line_user_error(work: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EvalkitError) as raised:
        send_otlp(work, f"http://127.0.0.1:{port}")
    message = str(raised.value)
    assert "\n" not in message and "refused" in message and str(port) in message, message


def test_the_export_command_sends_the_folder_to_a_collector(
    work: Path, receiver: _Receiver
) -> None:
    from typer.testing import CliRunner

    import evalkit.cli.main  # noqa: F401  (registers every command)
    from evalkit.cli.main import app

    args = ["--suite", str(REPO), "export", str(work), "--format", "otlp"]
    done = CliRunner().invoke(app, [*args, "--endpoint", receiver.base])
    assert done.exit_code == 0, done.stderr[-500:]
    [(path, _, body)] = receiver.posts
    spans = _parsed(body.decode("utf-8")).resource_spans[0].scope_spans[0].spans
    assert path == "/v1/traces" and len(spans) == len(REPS) + 1


def test_the_export_command_refuses_a_file_format_without_its_file(work: Path) -> None:
    from typer.testing import CliRunner

    import evalkit.cli.main  # noqa: F401  (registers every command)
    from evalkit.cli.main import app

    args = ["--suite", str(REPO), "export", str(work), "--format", "otlp-json"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code != 0 and "--out FILE" in done.stderr

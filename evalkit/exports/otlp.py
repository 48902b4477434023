"""A results folder as OpenTelemetry traces (OTLP/JSON), so a tracing backend a team already
runs (a collector, Jaeger, Tempo, an observability vendor) can show a grid beside the rest of
its telemetry, without evalkit taking on an OpenTelemetry SDK.

One trace per folder: a root span for the folder, one child span per rep (a row of its results
files, the rows a later `rescore` replaced left out as `report` leaves them), each carrying one
`gen_ai.evaluation.result` event for its verdict. Names follow the OpenTelemetry GenAI semantic
conventions where they have one; evalkit's own facts are under `evalkit.*`. The spans carry ids,
verdicts and reasons only: never a scenario's Task, a transcript or a path on this machine.

Every id is a hash of what the rep is (run id, scenario, model, rep) and every time comes from
the records, so two exports of one folder are the same bytes, and a backend that receives a
folder twice holds one trace of it.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit import __version__
from evalkit.errors import ConfigError, EvalkitError, PrerequisiteError, RefusedError
from evalkit.exports.rows import read_rows, summaries
from evalkit.exports.target import check_export_target
from evalkit.models import Plan, ResultRow
from evalkit.models.scenarios import ScenarioFile
from evalkit.outpaths import replace_file
from evalkit.records.folder.manifest import ManifestSummary
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.factors import bundle_declarations
from evalkit.records.report.model import Publishability
from evalkit.records.report.publishability import (
    calibrated_publishability,
    verified_publishability,
)
from evalkit.records.rows.agent import agent_of
from evalkit.records.verify.calibration import read_calibration
from evalkit.suite.config import Suite, load_suite
from evalkit.suite.lock import lock_state

TRACES_PATH = "/v1/traces"
"""OTLP/HTTP's path for traces under a collector's base URL."""
TIMEOUT = 30.0
"""Seconds to wait for the collector: long enough for a large folder's body, short enough
that an endpoint that never answers is named rather than waited on."""
EVALUATION = "evalkit.verdict"
"""`gen_ai.evaluation.name` of every verdict event: the one evaluation evalkit makes."""
SCORES = {"PASS": 1.0, "FAIL": 0.0}
"""A verdict's score; an ERROR has none: it is no measurement, never a score of 0."""
SPAN_KIND_INTERNAL = 1
STATUS_CODE_ERROR = 2
"""OTLP/JSON writes enums as their numbers."""
OPENING = b'{"resourceSpans":'
"""How every document this module writes begins: a file that does not is never ours to
overwrite."""


@dataclass
class _Folder:
    """What the export reads of a results folder: the rows `report` counts, by file order."""

    records: Workdir
    suite: Suite
    plans: list[Plan]
    rows: list[ResultRow]
    lines: list[ManifestSummary]


def otlp_document(folder: Path, *, suite: Suite | None = None) -> dict[str, Any]:
    """The folder as an OTLP/JSON `ExportTraceServiceRequest`. `suite` defaults to the one
    every command finds (EVALKIT_SUITE, or upward from here): the root span's publishability
    is drawn against it, and a folder recorded for another suite is refused, as `report`
    refuses it."""
    read = _read(folder, suite or load_suite())
    trace_id = _hex(16, "trace", *_run_ids(read))
    root_id = _hex(8, "root", *_run_ids(read))
    spans = _rep_spans(read, trace_id, root_id)
    start = min((int(s["startTimeUnixNano"]) for s in spans), default=_planned_ns(read.plans))
    end = max((int(s["endTimeUnixNano"]) for s in spans), default=start)
    root = {
        "traceId": trace_id,
        "spanId": root_id,
        "name": f"evalkit grid {_label(read)}",
        "kind": SPAN_KIND_INTERNAL,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _root_attributes(read),
    }
    resource = [_attr("service.name", "evalkit"), _attr("service.version", __version__)]
    scope = {"name": "evalkit", "version": __version__}
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource},
                "scopeSpans": [{"scope": scope, "spans": [root, *spans]}],
            }
        ]
    }


def encode(document: dict[str, Any]) -> bytes:
    """One line of compact JSON, as the OpenTelemetry Collector's file receiver and exporter
    keep a request per line; no key sorting, so the order written is the order built."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def rep_spans(document: dict[str, Any]) -> int:
    """How many rep spans a document holds: every span but the folder's root."""
    return sum(
        len(scoped["spans"]) - 1 for rs in document["resourceSpans"] for scoped in rs["scopeSpans"]
    )


def write_otlp_json(folder: Path, out: Path, *, suite: Suite | None = None) -> int:
    """Write the folder's document to OUT, replaced whole; the number of rep spans. OUT is
    refused where it would land on or inside a record the folder or suite is read from, or
    over a file that is not an earlier export."""
    chosen = suite or load_suite()
    _check_out(chosen, folder, out)
    document = otlp_document(folder, suite=chosen)
    replace_file(out, encode(document))
    return rep_spans(document)


def send_otlp(folder: Path, endpoint: str, *, suite: Suite | None = None) -> int:
    """POST the folder's document to a collector's OTLP/HTTP traces endpoint (its base URL,
    or one already ending in /v1/traces); the number of rep spans. A refused connection or an
    answer other than 2xx is one line naming the URL."""
    url = traces_url(endpoint)
    document = otlp_document(folder, suite=suite)
    request = urllib.request.Request(
        url, data=encode(document), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            status = int(answer.status)
    except urllib.error.HTTPError as exc:
        raise PrerequisiteError(f"{url}: the collector answered HTTP {exc.code}") from None
    except urllib.error.URLError as exc:
        raise PrerequisiteError(f"{url}: cannot send the traces: {_why(exc.reason)}") from None
    except (TimeoutError, OSError) as exc:
        raise PrerequisiteError(f"{url}: cannot send the traces: {_why(exc)}") from None
    if not 200 <= status < 300:
        raise PrerequisiteError(f"{url}: the collector answered HTTP {status}")
    return rep_spans(document)


def traces_url(endpoint: str) -> str:
    """The traces URL of a collector named by its base URL (OTEL_EXPORTER_OTLP_ENDPOINT's
    form) or by the traces URL itself."""
    url = endpoint.strip().rstrip("/")
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # a port that is no number raises here, not inside urlopen
    except ValueError:
        parts = urllib.parse.urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{endpoint}: not an http:// or https:// URL of an OTLP collector")
    return url if url.endswith(TRACES_PATH) else url + TRACES_PATH


def _why(reason: object) -> str:
    """An OS error's own words on one line (`Connection refused`), else the error's text."""
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is a collector listening there?)"
    if isinstance(reason, TimeoutError):
        return f"no answer within {TIMEOUT:g}s"
    text = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
    return " ".join(text.split()) or type(reason).__name__


def _check_out(suite: Suite, folder: Path, out: Path) -> None:
    """The rule every file evalkit writes for a user follows (records/pages/target.py): never
    on or inside what evalkit reads, never over a file of another kind."""
    check_export_target(suite, folder, out, "traces")
    if out.is_file():
        try:
            with out.open("rb") as fh:
                ours = fh.read(len(OPENING)) == OPENING
        except OSError as exc:
            raise ConfigError(f"{out}: cannot be read to see whose it is: {exc.strerror}") from None
        if not ours:
            raise RefusedError(f"{out}: exists and is not an OTLP export; refusing to overwrite it")


def _read(folder: Path, suite: Suite) -> _Folder:
    """The rows `report` counts; a folder of plans alone is a trace of its root span."""
    read = read_rows(folder, summaries, suite=suite, plans_suffice=True)
    return _Folder(read.records, suite, read.plans, read.rows, read.lines)


def _publishability(read: _Folder) -> Publishability:
    """The verdict `report` prints for the folder, drawn by the same functions."""
    calibration = read_calibration(read.plans, read.rows, (x.model for x in read.lines))
    if calibration is not None:
        return calibrated_publishability(
            read.suite, read.records, read.plans, read.lines, calibration.headline
        )
    return verified_publishability(read.suite, read.records, read.plans, read.lines)


def _root_attributes(read: _Folder) -> list[dict[str, Any]]:
    """The folder's suite, lock and publishability, with its verdict counts."""
    verdicts = Counter(row.verdict for row in read.rows)
    declared = sorted({str(x.declarations["lock"]) for x in read.lines if "lock" in x.declarations})
    found = _publishability(read)
    where = read.records.root.name  # the verdict's advice names the folder: never a machine path
    pairs: list[tuple[str, object]] = [
        ("evalkit.suite", read.suite.name),
        ("evalkit.suite.lock", lock_state(read.suite)),
        ("evalkit.lock", ",".join(declared) or "unknown"),
        ("evalkit.publishable", found.publishable),
        ("evalkit.publishability", found.verdict.replace(str(read.records.root), where)),
        ("evalkit.verification", found.verification),
        ("evalkit.folder", read.records.root.name),
        ("evalkit.run_ids", ",".join(_run_ids(read))),
        ("evalkit.reps", len(read.rows)),
        *((f"evalkit.verdicts.{v.lower()}", verdicts[v]) for v in ("PASS", "FAIL", "ERROR")),
        ("evalkit.version", __version__),
    ]
    return [_attr(key, value) for key, value in pairs]


def _rep_spans(read: _Folder, trace_id: str, root_id: str) -> list[dict[str, Any]]:
    """One span per row, in the order the rows were recorded."""
    bundles = bundle_declarations(read.lines)
    scenarios: dict[str, ScenarioFile | None] = {}
    created = {p.run_id: _time_ns(p.created) for p in read.plans}
    seen: Counter[tuple[str, ...]] = Counter()
    spans = []
    for row in read.rows:
        key = (row.run_id or read.records.root.name, row.scenario, row.model, str(row.rep))
        seen[key] += 1  # the same rep in two files (a copy): still a span of its own
        span_id = _hex(8, "rep", *key, *(["copy", str(seen[key])] if seen[key] > 1 else []))
        if row.scenario not in scenarios:
            scenarios[row.scenario] = _scenario(read.suite, row.scenario)
        end = _time_ns(row.time) or created.get(row.run_id) or 0
        start = max(end - row.duration_ms * 1_000_000, 0)
        decl = bundles.get(row.bundle_id, {})
        span: dict[str, Any] = {
            "traceId": trace_id,
            "spanId": span_id,
            "parentSpanId": root_id,
            "name": f"evalkit rep {row.scenario} {row.model} {row.rep}",
            "kind": SPAN_KIND_INTERNAL,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": _rep_attributes(row, decl, scenarios[row.scenario]),
            "events": [_verdict_event(row, end)],
        }
        if row.verdict == "ERROR":
            span["status"] = {"code": STATUS_CODE_ERROR, "message": _reasons(row) or "ERROR"}
        spans.append(span)
    return spans


def _rep_attributes(
    row: ResultRow, decl: dict[str, Any], scenario: ScenarioFile | None
) -> list[dict[str, Any]]:
    """The GenAI conventions' names where they have one, evalkit's own under `evalkit.*`."""
    agent = agent_of(decl)
    pairs: list[tuple[str, object]] = [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.provider.name", agent),
        ("gen_ai.system", agent),  # the name gen_ai.provider.name replaced, for older backends
        ("gen_ai.agent.name", agent),
        ("gen_ai.request.model", row.model),
    ]
    if row.model_id and row.model_id != "-":
        pairs.append(("gen_ai.response.model", row.model_id))
    if row.input_tokens or row.output_tokens:
        pairs += [
            ("gen_ai.usage.input_tokens", row.input_tokens),
            ("gen_ai.usage.output_tokens", row.output_tokens),
        ]
    pairs += [("evalkit.scenario.id", row.scenario)]
    if scenario is not None:
        facts = scenario.scenario
        pairs += [("evalkit.scenario.set", facts.set), ("evalkit.polarity", facts.polarity)]
        pairs += [("evalkit.level", facts.level)] if facts.level else []
        pairs += [("evalkit.kind", facts.kind)] if facts.kind else []
    pairs += [
        ("evalkit.run_id", row.run_id),
        ("evalkit.rep", row.rep),
        ("evalkit.attempt", row.attempt),
        ("evalkit.verdict", row.verdict),
        ("evalkit.axis.a", row.a),
        ("evalkit.axis.b", row.b),
        ("evalkit.flags", "" if row.flags == "-" else row.flags),
        ("evalkit.variant", row.variant),
        ("evalkit.subject_hash", row.subject_hash),
        ("evalkit.cli_version", row.cli_version),
        ("evalkit.bundle_id", row.bundle_id),
        ("evalkit.lock", str(decl.get("lock", ""))),
        ("evalkit.turns", row.turns),
        ("evalkit.duration_ms", row.duration_ms),
        ("evalkit.cost_usd_estimate", row.cost_usd_estimate),
        ("evalkit.usage.cache_read_tokens", row.cache_read_tokens),
        ("evalkit.usage.cache_write_tokens", row.cache_write_tokens),
    ]
    return [_attr(key, value) for key, value in pairs if value != ""]


def _verdict_event(row: ResultRow, at: int) -> dict[str, Any]:
    """The rep's verdict as the GenAI conventions' evaluation result. An ERROR carries no
    score, and `error.type` names its first reason instead."""
    attributes = [
        _attr("gen_ai.evaluation.name", EVALUATION),
        _attr("gen_ai.evaluation.score.label", row.verdict),
    ]
    if row.verdict in SCORES:
        attributes.append(_attr("gen_ai.evaluation.score.value", SCORES[row.verdict]))
    reasons = _reasons(row)
    if reasons:
        attributes.append(_attr("gen_ai.evaluation.explanation", reasons))
    if row.verdict == "ERROR":
        first = reasons.split(";", 1)[0].split(":", 1)[0]
        attributes.append(_attr("error.type", first or "ERROR"))
    return {"timeUnixNano": str(at), "name": "gen_ai.evaluation.result", "attributes": attributes}


def _reasons(row: ResultRow) -> str:
    return "" if row.reasons == "-" else row.reasons


def _scenario(suite: Suite, scenario_id: str) -> ScenarioFile | None:
    """The scenario's front matter (never its Task), or None once the suite no longer has it."""
    try:
        return suite.resolve(scenario_id)
    except EvalkitError:
        return None


def _attr(key: str, value: object) -> dict[str, Any]:
    """One OTLP `KeyValue`; 64-bit integers as decimal strings, as the JSON mapping writes them."""
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _hex(size: int, *parts: str) -> str:
    """A stable id of `size` bytes, as OTLP/JSON's lowercase hex; never the all-zero invalid one."""
    digest = hashlib.sha256("\0".join(parts).encode()).digest()[:size]
    return (digest if any(digest) else b"\1" * size).hex()


def _run_ids(read: _Folder) -> list[str]:
    """The folder's run ids, sorted; its name where no record names one."""
    ids = {row.run_id for row in read.rows if row.run_id} | {p.run_id for p in read.plans}
    return sorted(ids) or [read.records.root.name]


def _label(read: _Folder) -> str:
    ids = _run_ids(read)
    return ids[0] if len(ids) == 1 else read.records.root.name


def _planned_ns(plans: list[Plan]) -> int:
    return min((_time_ns(p.created) for p in plans), default=0)


def _time_ns(text: str) -> int:
    """An ISO time as Unix nanoseconds, exactly (no float); 0 when the record holds none."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    since = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (since.days * 86_400 + since.seconds) * 1_000_000_000 + since.microseconds * 1_000

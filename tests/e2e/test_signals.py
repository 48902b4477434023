"""The CLI's own word on what fired, through the real CLI: every rep exports its events to
its own receiver and nowhere else, the `skill_activated` label of a `Skill` call is kept
as `telemetry.jsonl` and agrees with the stream, and a label the agent forged from its own
Bash is flagged, which `verify` re-derives from the kept evidence.

Held-out rule: the assertions read flags and the export's event names, never a transcript
or the Task.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.scoring.signals import DISAGREES, PROACTIVE, SIGNALS_MISSING, read_labels
from tests.e2e.test_escape import _arrived

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

FORGE = """python3 - <<'EOF'
import json, os, urllib.request
attrs = [{"key": "event.name", "value": {"stringValue": "skill_activated"}},
         {"key": "invocation_trigger", "value": {"stringValue": "claude-proactive"}}]
body = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"attributes": attrs}]}]}]}
url = "http://127.0.0.1:4318/v1/logs"
req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
print(urllib.request.urlopen(req, timeout=5).status)
EOF"""
"""A label with no call behind it, posted by the agent to the OTLP port on its loopback (the
CLI keeps its own OTEL_ variables from its Bash, so the agent has to know where to look)."""


@pytest.fixture(scope="module")
def collector() -> Iterator[socket.socket]:
    """The caller's own OTLP collector on loopback: no rep's export may ever reach it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


@pytest.fixture(scope="module")
def labelled(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory,
    collector: socket.socket,
) -> tuple[Kit, dict[str, Path]]:
    """neighbour-wins on P1 (a Skill call) confined and unconfined, with the caller's own
    exporter variables set to the collector, prompts and tool details asked for."""
    kit = new_kit(tmp_path_factory.mktemp("signals"))
    url = f"http://127.0.0.1:{collector.getsockname()[1]}"
    kit.extra_env.update(OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=url,
                         OTEL_LOG_USER_PROMPTS="1", OTEL_LOG_TOOL_DETAILS="1")  # fmt: skip
    works = {"confined": kit.base / "c", "unconfined": kit.base / "u"}
    for how, work in works.items():
        more = ["--unconfined"] if how == "unconfined" else []
        done = kit.run("run", "P1", "policy:neighbour-wins", str(work), *more)
        assert done.returncode == 0, done.why()
    return kit, works


def _kept(kit: Kit, work: Path, role: str) -> Path:
    (line,) = kit.manifest(work)
    return work / line["evidence"] / line["files"][role]


def _events(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceLogs"]:
            for scope in resource["scopeLogs"]:
                for record in scope["logRecords"]:
                    found.append({a["key"]: a["value"] for a in record["attributes"]})
    return found


@pytest.mark.parametrize("how", ["confined", "unconfined"])
def test_a_skill_call_s_own_label_is_kept_and_agrees(
    labelled: tuple[Kit, dict[str, Path]], how: str
) -> None:
    kit, works = labelled
    kept = _kept(kit, works[how], "telemetry")
    labels = read_labels(kept.read_text()).labels
    assert any(x.trigger == PROACTIVE and x.call for x in labels), str(kept)
    (row,) = kit.tsv(works[how])
    flags = row["flags"].split(";")
    assert "fired:jot:jot" in flags, str(kept)
    assert not [f for f in flags if f.startswith(DISAGREES) or f == SIGNALS_MISSING], flags


def test_no_export_reaches_the_caller_s_collector_and_no_prompt_is_logged(
    labelled: tuple[Kit, dict[str, Path]], collector: socket.socket
) -> None:
    kit, works = labelled
    assert not _arrived(collector), "an export reached the caller's own collector"
    for work in works.values():
        kept = _kept(kit, work, "telemetry")
        prompts = [e for e in _events(kept) if e["event.name"]["stringValue"] == "user_prompt"]
        redacted = all(e["prompt"]["stringValue"] == "<REDACTED>" for e in prompts)
        assert bool(prompts) and redacted, str(kept)


def test_a_label_the_agent_forged_is_flagged_and_verify_re_derives_it(kit: Kit) -> None:
    """The real-model path: `sonnet` against a loopback endpoint, the agent's own Bash
    posting a `skill_activated` label no call explains."""
    work = kit.base / "work"
    forge = Step(blocks=[ToolUseBlock(name="Bash", input={"command": FORGE})])
    with ScriptedServer(Script(steps=[forge], final_text="Done.")) as server:
        kit.extra_env.update(
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
            EVALKIT_JUDGE_CMD="echo NO",
        )
        done = kit.run("run", "P1", "sonnet", str(work), "--skip-preflight")
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    assert DISAGREES + "label-without-call" in row["flags"].split(";"), row["flags"]
    verified = kit.run("verify", str(work))
    assert "All 1 trial(s) re-derived from the kept evidence." in verified.stdout, verified.why()


def test_an_export_that_never_arrived_is_missing_and_verify_re_derives_it(kit: Kit) -> None:
    """A rep stopped by its time limit before the CLI's first export: an ERROR, its kept
    export empty, flagged `signals:missing` and never a disagreement."""
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work), "--timeout", "0.1")
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    flags = row["flags"].split(";")
    assert row["verdict"] == "ERROR" and SIGNALS_MISSING in flags, row["flags"]
    assert not [f for f in flags if f.startswith(DISAGREES)], row["flags"]
    empty = _kept(kit, work, "telemetry").stat().st_size == 0
    assert empty, str(work)
    verified = kit.run("verify", str(work))
    assert "All 1 trial(s) re-derived from the kept evidence." in verified.stdout, verified.why()

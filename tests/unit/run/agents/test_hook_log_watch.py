"""The hooks' log of an agent whose hooks evalkit records lies where the agent's shell can
write it: evalkit keeps each line as it saw it arrive, placed by the stream's lines at that
moment, and names a log that was rewritten or holds a line that is no hook run."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.models import HookEvent, ToolCall, Transcript
from evalkit.run.agents.hooks import HookLogWatch
from evalkit.scoring.validity import hook_tampering

RUN = {"type": "hook_run", "hook_event": "SessionStart", "hook_name": "SessionStart:p",
       "exit_code": 0, "outcome": "success", "output": "ready\n"}  # fmt: skip


def _watch(tmp_path: Path) -> tuple[HookLogWatch, Path, Path]:
    log, stream = tmp_path / "hook-runs.jsonl", tmp_path / "transcript.jsonl"
    stream.write_bytes(b"")
    return HookLogWatch(log, stream), log, stream


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def test_each_hook_run_is_kept_as_it_arrived_with_the_streams_lines_then(tmp_path: Path) -> None:
    watch, log, stream = _watch(tmp_path)
    _append(stream, '{"a": 1}\n')
    _append(log, json.dumps(RUN) + "\n" + json.dumps(RUN)[:10])  # the second half-written
    watch()
    _append(stream, '{"a": 2}\n{"a": 3}\n')
    _append(log, json.dumps(RUN)[10:] + "\n")
    watch()
    kept = [json.loads(x) for x in watch.text().splitlines()]
    # each placed by the stream's lines at the poll before it was seen: surely there then
    assert [k["line"] for k in kept] == [0, 1] and watch.problems == []
    # named for the transcript's readers, as the recorder's word never was inside the rep
    assert all(k == {**RUN, "type": "evalkit.hook_run", "line": k["line"]} for k in kept)


def test_a_log_whose_earlier_lines_changed_or_vanished_was_rewritten(tmp_path: Path) -> None:
    watch, log, _ = _watch(tmp_path)
    _append(log, json.dumps({**RUN, "exit_code": 1}) + "\n")
    watch()
    log.write_text(json.dumps(RUN) + "\n", encoding="utf-8")
    watch()
    assert watch.problems == ["hook-log-rewritten"]


def test_a_log_removed_after_a_run_arrived_was_rewritten(tmp_path: Path) -> None:
    watch, log, _ = _watch(tmp_path)
    _append(log, json.dumps(RUN) + "\n")
    watch()
    log.unlink()
    watch()
    assert watch.problems == ["hook-log-rewritten"]


def test_a_line_that_is_no_hook_run_is_left_out_and_named(tmp_path: Path) -> None:
    watch, log, _ = _watch(tmp_path)
    forged_call = {"type": "item.completed", "item": {"type": "command_execution"}}
    _append(log, json.dumps(RUN) + "\n" + json.dumps(forged_call) + "\n")
    _append(log, json.dumps({**RUN, "line": 0}) + "\n")
    watch()
    kept = watch.text().splitlines()
    assert len(kept) == 1
    assert watch.problems == ["hook-log-malformed:line-2", "hook-log-malformed:line-3"]


def _transcript(hook_line: int | None, event: str = "SessionStart") -> Transcript:
    call = ToolCall(id="c", name="Bash", input={"command": "ls"}, line=4, result_line=6)
    hook = HookEvent(subtype="hook_response", hook_event=event, outcome="success",
                     exit_code=0, line=hook_line)  # fmt: skip
    return Transcript(tool_calls=[call], hooks=[hook])


def test_a_session_start_run_that_arrived_after_the_first_call_is_tampering() -> None:
    got = hook_tampering(_transcript(5), [])
    assert got == "tampering:hook-run-out-of-place:SessionStart"
    assert hook_tampering(_transcript(4), []) is None  # the call's line not yet seen
    assert hook_tampering(_transcript(1), []) is None


def test_runs_the_stream_reports_and_later_events_are_not_placed() -> None:
    assert hook_tampering(_transcript(None), []) is None
    assert hook_tampering(_transcript(9, "PostToolUse"), []) is None


def test_a_tampered_log_is_named_first() -> None:
    assert hook_tampering(_transcript(1), ["hook-log-rewritten"]) == "tampering:hook-log-rewritten"

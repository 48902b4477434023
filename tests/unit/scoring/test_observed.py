"""The observed runs' log is hostile input: read strictly, capped, never followed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.models import ToolCall
from evalkit.scoring.observed import (
    MAX_LOG_BYTES,
    LogProblem,
    ObservedRun,
    forged_run,
    log_path,
    read_runs,
)


def write_log(sandbox: Path, *records: dict[str, Any]) -> None:
    log = log_path(sandbox)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(r) + "\n" for r in records))


START = {"event": "start", "id": "1", "script": "bin/test", "cwd": "/p", "args": [], "time": 1.0,
         "line": 4}  # fmt: skip
END = {"event": "end", "id": "1", "time": 2.0, "line": 6, "exit": 0}


def test_a_start_and_its_end_are_one_run(tmp_path: Path) -> None:
    write_log(tmp_path, START, END, {**START, "id": "2", "line": None})
    first, second = read_runs(tmp_path, ["bin/test"])
    assert (first.start_line, first.end_line, first.ok) == (4, 6, True)
    assert (second.start_line, second.exit_code) == (None, None)


def test_an_empty_log_is_no_runs(tmp_path: Path) -> None:
    write_log(tmp_path)
    assert read_runs(tmp_path, ["bin/test"]) == []


@pytest.mark.parametrize(
    ("records", "problem"),
    [
        ([START, {**END, "id": "9"}], "observed-log-malformed:line-2"),
        ([START, END, END], "observed-log-malformed:line-3"),
        ([{**START, "script": "bin/other"}], "observed-log-malformed:line-1"),
        ([{**START, "extra": 1}], "observed-log-malformed:line-1"),
        ([{**START, "args": "not-a-list"}], "observed-log-malformed:line-1"),
        ([{**START, "line": "4"}], "observed-log-malformed:line-1"),
        ([["a list"]], "observed-log-malformed:line-1"),
    ],
)
def test_a_log_that_cannot_be_trusted_is_named(
    tmp_path: Path, records: list[dict[str, Any]], problem: str
) -> None:
    write_log(tmp_path, *records)
    with pytest.raises(LogProblem) as caught:
        read_runs(tmp_path, ["bin/test"])
    assert str(caught.value) == problem


def test_a_missing_oversized_or_linked_log_is_named(tmp_path: Path) -> None:
    with pytest.raises(LogProblem, match="observed-log-missing"):
        read_runs(tmp_path, ["bin/test"])
    log_path(tmp_path).parent.mkdir()
    log_path(tmp_path).write_bytes(b" " * (MAX_LOG_BYTES + 1))
    with pytest.raises(LogProblem, match="observed-log-too-large"):
        read_runs(tmp_path, ["bin/test"])
    log_path(tmp_path).unlink()
    (tmp_path / "elsewhere").write_text("")
    log_path(tmp_path).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LogProblem, match="observed-log-not-a-file"):
        read_runs(tmp_path, ["bin/test"])


def _call(line: int, result_line: int | None) -> ToolCall:
    return ToolCall(id="t", name="Bash", input={}, line=line, result_line=result_line)


def _run(start: int | None, end: int | None = None) -> ObservedRun:
    return ObservedRun("bin/test", "/p", (), start, end, 0)


def test_a_run_inside_the_call_that_started_it_is_the_agents() -> None:
    # tool_use at line 7 (from 0): 8 lines complete when its script starts
    assert forged_run([_run(8, 8)], [_call(7, 8)]) is None


def test_a_run_that_started_before_its_calls_line_was_kept_is_the_agents() -> None:
    # the CLI wrote line 7 and started the tool before evalkit had copied the line
    assert forged_run([_run(7, 8)], [_call(7, 8)]) is None


def test_a_run_that_started_before_any_line_of_its_call_is_tampering() -> None:
    assert forged_run([_run(6, 8)], [_call(7, 8)]) == "tampering:observed-run-outside-a-call"


def test_a_run_a_background_call_left_ending_after_its_result_is_the_agents() -> None:
    assert forged_run([_run(8, 12)], [_call(7, 8)]) is None


def test_a_run_no_tool_call_holds_is_tampering() -> None:
    assert forged_run([_run(2, 2)], [_call(7, 8)]) == "tampering:observed-run-outside-a-call"
    assert forged_run([_run(50, 50)], [_call(7, 8)]) == "tampering:observed-run-outside-a-call"


def test_a_run_with_no_place_is_tampering() -> None:
    assert forged_run([_run(None)], [_call(7, 8)]) == "tampering:observed-run-unplaced"

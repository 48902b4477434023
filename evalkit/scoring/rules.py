"""Rules every checker applies before its own: is this a valid measurement at all?"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.models import RequiredHook, ToolCall, Transcript, Verdict
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.fsdiff import links_into
from evalkit.scoring.judge import build_prompt
from evalkit.scoring.transcript import invalid_reason

WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}


def error_verdict(inp: CheckInput, reason: str) -> Verdict:
    return Verdict(
        scenario=inp.scenario.id,
        model=inp.model,
        polarity=inp.scenario.scenario.polarity,
        axis_a="A:ERROR",
        axis_b="B:ERROR",
        verdict="ERROR",
        reasons=[reason],
    )


def missing_hooks(transcript: Transcript, required: list[RequiredHook]) -> list[str]:
    """Required hooks without a successful hook_response carrying the expected output."""
    missing = []
    for hook in required:
        fired = any(
            h.subtype == "hook_response"
            and h.hook_event == hook.event
            and h.outcome == "success"
            and hook.output_contains in h.output
            for h in transcript.hooks
        )
        if not fired:
            missing.append(f"hook-missing:{hook.event}")
    return missing


def preflight(inp: CheckInput, breaches: list[str]) -> Verdict | None:
    """ERROR for a trace that measures nothing; FAIL both axes when a required hook never fired.

    A breach is named even on an ERROR row: it must never go unnoticed.
    """
    invalid = invalid_reason(inp.transcript)
    if invalid is not None:
        verdict = error_verdict(inp, invalid)
        verdict.reasons += breaches
        return verdict
    missing = missing_hooks(inp.transcript, inp.suite.config.required_hooks)
    if missing:
        verdict = error_verdict(inp, missing[0])
        verdict.axis_a, verdict.axis_b, verdict.verdict = "A:FAIL", "B:FAIL", "FAIL"
        verdict.reasons = breaches + missing
        return verdict
    return None


def _under(path_text: str, root: Path, cwd: str) -> bool:
    path = Path(os.path.expanduser(path_text))
    if not path.is_absolute():
        path = Path(cwd) / path
    path = Path(os.path.normpath(path))
    return path == root or root in path.parents


def _spellings(root: Path) -> list[str]:
    forms = [str(root)]
    home = Path.home()
    if root == home or home in root.parents:
        rel = root.relative_to(home).as_posix()
        forms += [f"~/{rel}", f"$HOME/{rel}", f"${{HOME}}/{rel}"]
    return forms


def breach_calls(calls: list[ToolCall], root: Path, cwd: str) -> list[str]:
    found = []
    for call in calls:
        key = WRITE_TOOLS.get(call.name)
        if key and isinstance(call.input.get(key), str) and _under(call.input[key], root, cwd):
            found.append(f"{call.name}:{call.input[key]}")
        elif call.name == "Bash":
            command = str(call.input.get("command", ""))
            if any(form in command for form in _spellings(root)):
                found.append("Bash")
    return found


def breach_reasons(inp: CheckInput, real_vault: Path) -> list[str]:
    """Loud reasons for any write that reached the real vault, by tool call or symlink."""
    root = Path(os.path.normpath(real_vault.expanduser()))
    cwd = inp.transcript.init.cwd if inp.transcript.init else str(inp.sandbox / "project")
    hits = breach_calls(inp.transcript.tool_calls, root, cwd)
    hits += [f"symlink:{p}" for p in links_into(inp.sandbox, root)]
    return [f"real-vault-breach:{h}" for h in hits]


def ask_judge(inp: CheckInput, verdict: Verdict, message: str) -> Verdict | None:
    """Put the frozen rubric and one message to the judge; the record goes on the verdict.

    Returns an ERROR verdict, keeping the record and the flags, when the judge failed or
    answered anything but YES or NO; None when its answer is on the verdict to read.
    """
    rubric = inp.suite.rubric_path.read_text(encoding="utf-8")
    record = inp.judge.ask(build_prompt(rubric, message))
    verdict.judge = record
    if record.error is None and record.answer is not None:
        return None
    failed = error_verdict(inp, f"judge-error:{record.error}")
    failed.judge, failed.flags = record, list(verdict.flags)
    return failed

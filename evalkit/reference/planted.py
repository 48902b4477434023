"""The world scan proven without a CLI: fabricated request bodies with one marker planted.

A scripted rep fails `marker:<channel>:<word>` when a request its CLI sends names the
measurement; the recon reps prove that through the real CLIs, which takes minutes. This is
the part `self-test` can hold in milliseconds: for each wire the scripted servers read
(Anthropic's Messages API, OpenAI's Responses API, Gemini's generateContent), one body per
channel that wire carries, each with a marker of the suite planted in that channel alone,
must give exactly that channel's reason; and the controls must give none: a body with no
marker, a marker in the user's own message (the scan never reads a Task), and a tool's
result that repeats a word its own call named. Each body goes through the same reader the
server uses (`request_pieces` of its wire) and the suite's own markers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from evalkit.reference.wire.pieces import gemini_pieces, responses_pieces
from evalkit.scoring.world.leaks import Scan, request_pieces
from evalkit.suite.config import Suite
from evalkit.suite.markers import suite_markers

Body = dict[str, Any]
Pieces = Callable[[Body], Iterator[tuple[str, str, str]]]
CLEAN = "clean"
USER_TEXT = "user-text"
OWN_WORD = "own-word"
CONTROLS = (CLEAN, USER_TEXT, OWN_WORD)
"""The bodies that must give no reason."""
_HOME = "/home/ada/src/reportgen"


@dataclass(frozen=True)
class PlantedCell:
    """One fabricated body of one wire: the reasons it must give and those it gave."""

    wire: str
    case: str
    expected: tuple[str, ...]
    found: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.expected == self.found


def planted_words(suite: Suite) -> tuple[str, str]:
    """The two markers planted: the suite's first scenario id (its own measurement's name)
    and `evalkit`, which no suite can make ordinary."""
    ids = [s.id for s in suite.scenarios("run")] or [s.id for s in suite.scenarios("all")]
    return (ids[0] if ids else "evalkit"), "evalkit"


def _messages(case: str, word: str) -> Body:
    system = "You are an agent for software work.\n<env>\nWorking directory: " + _HOME
    system += ("/" + word if case == "env-context" else "") + "\n</env>"
    if case == "system-prompt":
        system = f"Notes for {word} follow.\n" + system
    call = "ls " + word if case == OWN_WORD else "ls"
    result = f"ls: cannot access '{word}'" if case == OWN_WORD else "README.md\nsrc"
    result += f"\n{word}.md" if case == "tool-result" else ""
    user: list[Any] = [{"type": "text", "text": f"Tidy {word} up." if case == USER_TEXT else "Hi."}]
    if case == "hook-output":
        reminder = f"SessionStart hook additional context: {word} is ready"
        user.insert(
            0, {"type": "text", "text": f"<system-reminder>\n{reminder}\n</system-reminder>"}
        )
    return {
        "system": [{"type": "text", "text": system}],
        "tools": [{"name": "Bash", "description": "Runs a shell command."}],
        "messages": [
            {"role": "user", "content": user},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": call}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": result}]},
        ],
    }  # fmt: skip


def _responses(case: str, word: str) -> Body:
    instructions = "You are a coding agent." + (
        f" Notes for {word}." if case == "system-prompt" else ""
    )
    cwd = _HOME + ("/" + word if case == "env-context" else "")
    call = "ls " + word if case == OWN_WORD else "ls"
    output = f"ls: cannot access '{word}'" if case == OWN_WORD else "README.md\nsrc"
    output += f"\n{word}.md" if case == "tool-result" else ""
    items: list[Body] = [
        {"type": "message", "role": "developer",
         "content": [{"type": "input_text", "text": "<permissions>none</permissions>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text",
         "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text",
         "text": f"Tidy {word} up." if case == USER_TEXT else "Hi."}]},
        {"type": "function_call", "call_id": "c1", "name": "exec_command",
         "arguments": json.dumps({"cmd": call})},
        {"type": "function_call_output", "call_id": "c1", "output": output},
    ]  # fmt: skip
    if case == "hook-output":
        items.append({"type": "message", "role": "developer",
                      "content": [{"type": "input_text", "text": f"{word} is ready"}]})  # fmt: skip
    tool = {"type": "function", "name": "exec_command", "description": "Runs a command."}
    return {"instructions": instructions, "tools": [tool], "input": items}


def _gemini(case: str, word: str) -> Body:
    system = "You are a coding agent." + (f" Notes for {word}." if case == "system-prompt" else "")
    cwd = _HOME + ("/" + word if case == "env-context" else "")
    call = "ls " + word if case == OWN_WORD else "ls"
    output = f"ls: cannot access '{word}'" if case == OWN_WORD else "README.md\nsrc"
    output += f"\n{word}.md" if case == "tool-result" else ""
    return {
        "systemInstruction": {"parts": [{"text": system}]},
        "tools": [{"functionDeclarations": [
            {"name": "run_shell_command", "description": "Runs a command."}]}],
        "contents": [
            {"role": "user", "parts": [
                {"text": f"<session_context>\nworking directory: {cwd}\n</session_context>"},
                {"text": f"Tidy {word} up." if case == USER_TEXT else "Hi."}]},
            {"role": "model", "parts": [{"functionCall": {
                "id": "g1", "name": "run_shell_command", "args": {"command": call}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "g1", "name": "run_shell_command", "response": {"output": output}}}]},
        ],
    }  # fmt: skip


WIRES: dict[str, tuple[Callable[[str, str], Body], Pieces, tuple[str, ...]]] = {
    "messages": (_messages, request_pieces,
                 ("system-prompt", "env-context", "tool-result", "hook-output")),
    "responses": (_responses, responses_pieces,
                  ("system-prompt", "env-context", "tool-result", "hook-output")),
    "generate-content": (_gemini, gemini_pieces, ("system-prompt", "env-context", "tool-result")),
}  # fmt: skip
"""Per wire: its fabricated body, the reader its scripted server scans with, and the
channels it carries (Gemini hands a hook's words to its model in no place of their own)."""


def planted_scan(suite: Suite) -> list[PlantedCell]:
    """Every wire's planted bodies and controls, scanned with the suite's markers."""
    scan = Scan(suite_markers(suite))
    words = planted_words(suite)
    cells = []
    for wire, (body, pieces, channels) in WIRES.items():
        for number, case in enumerate((*channels, *CONTROLS)):
            word = words[number % len(words)]
            expected = () if case in CONTROLS else (f"marker:{case}:{word}",)
            found = tuple(scan.reasons(pieces(body(case, word))))
            cells.append(PlantedCell(wire, case, expected, found))
    return cells

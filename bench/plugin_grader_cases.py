"""The grader cases `bench/vs_plugin_eval.py --graders` plays to `claude plugin eval` and to
evalkit: one case per grader type and option, each with the one scripted turn both tools are
served (its sidecar's `oracle`), and what each arm of the runner is asked to agree on.

Every case's prompt names only the case, so nothing here is a held-out Task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL = "---\nname: greet\ndescription: greets a team by name\n---\nGreet the team warmly.\n"
TOOLS = ["Read", "Write", "Skill"]
JUDGE_WORDS = {"YES": "PASS", "NO": "FAIL"}
"""The one fixed verdict both judges are served, in each one's words: evalkit's judge reads
YES or NO, the runner's PASS or FAIL."""


def read(path: str) -> dict[str, Any]:
    return {"read": path}


def write(path: str, content: str = "x\n") -> dict[str, Any]:
    return {"write": {"path": path, "content": content}}


@dataclass
class GraderCase:
    name: str
    graders: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    execution: dict[str, Any] = field(default_factory=dict)


ORDER = {"name": "read-then-write", "type": "tool_order", "before": "Read", "after": "Write"}
SAID = {"name": "said-hello", "type": "regex", "pattern": "hello"}
CASES = [
    GraderCase("used-once", [{"name": "read", "type": "tool_used", "tool": "Read"}],
               [read("a.txt"), {"final": "done"}]),
    GraderCase("used-min-max-short", [{"name": "reads", "type": "tool_used", "tool": "Read",
                                       "min": 2, "max": 3}], [read("a.txt")]),
    GraderCase("used-min-max-held", [{"name": "reads", "type": "tool_used", "tool": "Read",
                                      "min": 2, "max": 3}], [read("a.txt"), read("b.txt")]),
    GraderCase("used-never", [{"name": "no-write", "type": "tool_used", "tool": "Write",
                               "min": 0, "max": 0}], [read("a.txt")]),
    GraderCase("input-compact", [{"name": "wrote-a", "type": "tool_used", "tool": "Write",
                                  "input_match": '"file_path":"[^"]*a\\.txt","content":"x'}],
               [write("a.txt")]),
    GraderCase("input-number", [{"name": "limit", "type": "tool_used", "tool": "Read",
                                 "input_match": '"limit":5[,}]'}],
               [{"tool": {"name": "Read", "input": {"file_path": "{project}/a.txt",
                                                    "limit": 5.0}}}]),
    GraderCase("order-first-call", [ORDER], [write("a.txt"), read("a.txt"), write("b.txt")]),
    GraderCase("order-one-message", [ORDER], [{"at_once": [read("a.txt"), write("a.txt")]}]),
    GraderCase("order-input-match", [{**ORDER, "before": {"tool": "Write",
                                                          "input_match": "b\\.txt"}}],
               [write("a.txt"), read("a.txt"), write("b.txt")]),
    GraderCase("regex-contains", [SAID], [{"final": "well hello there"}]),
    GraderCase("regex-not-contains", [{"name": "quiet", "type": "regex", "pattern": "secret",
                                       "match": "not_contains"}], [{"final": "nothing"}]),
    GraderCase("regex-count-0", [{"name": "no-xy", "type": "regex", "pattern": "x+y",
                                  "match": "count:0"}], [{"final": "xxy"}]),
    GraderCase("regex-multiline-crlf", [{"name": "line-b", "type": "regex", "pattern": "^b$",
                                         "flags": "m"}], [{"final": "a\r\nb\r\nc"}]),
    GraderCase("regex-nbsp", [{"name": "spaced", "type": "regex", "pattern": "a\\sb"}],
               [{"final": "a\u00a0b"}]),
    GraderCase("regex-trace", [{"name": "read-a", "type": "regex", "target": "trace",
                                "pattern": '"name":"Read","input":\\{"file_path":'}],
               [read("a.txt")]),
    GraderCase("skill-unmarked", [{"name": "fired", "type": "tool_used", "tool": "Skill"},
                                  SAID], [{"final": "hello"}]),
    GraderCase("arm-with-only", [{"name": "read", "type": "tool_used", "tool": "Read",
                                  "arm": "with-only"}, SAID], [{"final": "hello"}]),
    GraderCase("arm-both", [{"name": "fired", "type": "tool_used", "tool": "Skill",
                             "arm": "both"}, SAID], [{"final": "hello"}]),
    GraderCase("file-exists", [{"name": "made-a", "type": "file_exists", "path": "a.txt"}],
               [write("a.txt")]),
    GraderCase("file-absent", [{"name": "no-a", "type": "file_exists", "path": "*.txt",
                                "exists": False}], [write("a.txt")]),
    GraderCase("llm-yes", [{"name": "judged", "type": "llm",
                            "criteria": "The reply answers (case llm-yes)."}],
               [{"final": "an answer"}, {"judge": "YES"}]),
    GraderCase("llm-no", [{"name": "judged", "type": "llm",
                           "criteria": "The reply answers (case llm-no)."}],
               [{"final": "an answer"}, {"judge": "NO"}]),
    GraderCase("turns-default", [{"name": "all-read", "type": "regex", "pattern": "all read"}],
               [*(read(f"{n}.txt") for n in range(11)), {"final": "all read"}],
               {"max_turns": None}),
]  # fmt: skip
QUICK = ("order-one-message",)
"""The subset `make test` plays; the rest sit behind the `slow` marker."""


def write_plugin(root: Path, cases: list[GraderCase]) -> None:
    """The plugin, its eval folder of these cases, and each case's sidecar oracle."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "greeter"}\n')
    (root / "skills" / "greet").mkdir(parents=True)
    (root / "skills" / "greet" / "SKILL.md").write_text(SKILL)
    for case in cases:
        folder = root / "evals" / case.name
        folder.mkdir(parents=True)
        execution = {
            "prompt": f"Play the grader case {case.name}.",
            "max_turns": 20,
            "timeout_seconds": 120,
            "allowed_tools": TOOLS,
            **case.execution,
        }
        execution = {k: v for k, v in execution.items() if v is not None}
        data = {"schema_version": "1.0", "name": case.name, "runs": 1,
                "execution": execution, "graders": case.graders}  # fmt: skip
        (folder / "case.yaml").write_text(json.dumps(data, indent=1))
        sidecar = {"calibration": {"oracle": case.actions, "act": case.actions}}
        (folder / "evalkit.yaml").write_text(json.dumps(sidecar, indent=1))


def judge_word(case: GraderCase) -> str:
    said = next((a["judge"] for a in case.actions if "judge" in a), "NO")
    return JUDGE_WORDS[said]

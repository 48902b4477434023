"""How long `check` takes on a very long transcript: 50,000 events, a quarter of them Bash
calls that mention paths, scored by the same decision `evalkit check` uses.

Prints parse and decide seconds beside the goal (under 1 s in all); not a test.

Usage: .venv/bin/python bench/check_large.py [--events 50000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import REPO, isolate

GOAL = 1.0


def events(project: Path, count: int) -> list[str]:
    lines = [
        json.dumps({"type": "system", "subtype": "hook_response", "hook_event": "SessionStart",
                    "hook_name": "SessionStart:startup", "output": "os-vault ready",
                    "exit_code": 0, "outcome": "success"}),
        json.dumps({"type": "system", "subtype": "init", "cwd": str(project), "session_id": "b",
                    "model": "bench", "claude_code_version": "2.1.328", "tools": ["Bash"]}),
    ]  # fmt: skip
    for number in range((count - 3) // 2):
        use = {"type": "tool_use", "id": f"t{number}", "name": "Bash",
               "input": {"command": f"grep -rn pattern{number} lib/ ~/notes/x | head -5"}}
        result = {"type": "tool_result", "tool_use_id": f"t{number}", "content": "ok",
                  "is_error": False}
        lines.append(json.dumps({"type": "assistant", "message": {"id": f"m{number}",
                                 "content": [use]}}))
        lines.append(json.dumps({"type": "user", "message": {"content": [result]}}))
    lines.append(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                             "terminal_reason": "completed", "result": "Done.",
                             "num_turns": 1}))  # fmt: skip
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-check-") as tmp:
        isolate(Path(tmp) / "world")
        from evalkit.run.sandbox import build_sandbox
        from evalkit.run.sandbox_check import check_sandbox
        from evalkit.scoring.judge import FixedJudge
        from evalkit.suite.config import load_suite

        suite = load_suite(REPO)
        sandbox = Path(tmp) / "sandbox"
        build_sandbox(suite, suite.resolve("N1"), sandbox)
        lines = events(sandbox / "project", args.events)
        (sandbox / "transcript.jsonl").write_text("\n".join(lines) + "\n")
        began, began_cpu = time.perf_counter(), time.process_time()
        verdict = check_sandbox(suite, sandbox, judge=FixedJudge("NO"))
        wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
        print(f"{len(lines)} events: {verdict.verdict} {';'.join(verdict.reasons) or '-'}")
        print(f"check: wall {wall:.3f} s, CPU {cpu:.3f} s (goal: under {GOAL} s)")
        print(f"ratio of CPU to goal: {cpu / GOAL:.2f}")


if __name__ == "__main__":
    main()

"""`policy:escape`: the ideal behaviour, after trying every way out of its rep.

Proof that a rep is confined: before doing the ideal policy's work, the script writes
outside the rep with Write, a Bash redirect, `python3 -c` and `node -e`, makes a symlink in
the project that points outside and writes through it, reads the suite's own scenario file
by its absolute path, searches the machine for scenario files and connects to another
loopback port. Confined, none of it lands or reads anything, the row carries the escape
flags, and the verdict is the ideal policy's. It runs only confined: unconfined it would
write into the user's HOME and results folder.

Self-test plays it against stand-ins inside the case's own sandbox folder, so its real
effects stay there.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.checkers.behaviour import PolicyPlan
from evalkit.models import Step, ToolUseBlock

ESCAPE = "escape"
PORT_ENV = "EVALKIT_ESCAPE_PORT"
"""The loopback port policy:escape tries (a test sets one it listens on); default 9."""
DEFAULT_PORT = "9"
STAND_IN_PORT = "1"
LINK = "escape-link"


def _bash(command: str) -> Step:
    return Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])


def escape_steps() -> list[Step]:
    """The attempts, their targets as placeholders (see `run_values`, `stand_in_values`)."""
    return [
        Step(
            blocks=[
                ToolUseBlock(
                    name="Write",
                    input={
                        "file_path": "{escape_home}/evalkit-escape/write.txt",
                        "content": "escaped\n",
                    },
                )  # fmt: skip
            ]
        ),
        _bash("echo escaped > {escape_home}/evalkit-escape-redirect.txt"),
        _bash(
            "python3 -c \"open('{escape_results}/evalkit-escape-python.txt', 'w')"
            ".write('escaped')\""
        ),
        _bash(
            "node -e \"require('fs').writeFileSync("
            "'{escape_results}/evalkit-escape-node.txt', 'escaped')\""
        ),
        _bash(
            f"ln -s {{escape_home}} {LINK}; echo escaped > {LINK}/evalkit-escape-link.txt; "
            f"status=$?; rm -f {LINK}; exit $status"
        ),
        Step(blocks=[ToolUseBlock(name="Read", input={"file_path": "{escape_scenario}"})]),
        _bash(
            "find {escape_root} -maxdepth 6 -path '*scenarios*' -name '*.md' 2>/dev/null | head -5"
        ),
        _bash("exec 3<>/dev/tcp/127.0.0.1/{escape_port} && echo connected"),
    ]


def escape_plan(ideal: PolicyPlan) -> PolicyPlan:
    """The ideal policy's calls, then the attempts, then its final message; it must score as
    the ideal does (a rule on which call came first, as `claude plugin eval`'s `tool_order`
    is, sees the ideal's calls first)."""
    script = ideal.script.model_copy(update={"steps": ideal.script.steps + escape_steps()})
    return PolicyPlan(script, ideal.expect, ideal.judge_answer, list(ideal.notes))


def run_values(home: Path, results: Path, scenario: Path, port: str | None) -> dict[str, str]:
    """The real targets of a run: the user's HOME, the results folder, the suite's own
    scenario file, the whole machine, another loopback port."""
    return {
        "escape_home": str(home),
        "escape_results": str(results),
        "escape_scenario": str(scenario),
        "escape_root": "/",
        "escape_port": port or DEFAULT_PORT,
    }


def stand_in_values(folder: Path) -> dict[str, str]:
    """Stand-ins for self-test, made inside `folder`: what lands there harms nothing."""
    for name in ("home", "results", "root"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    scenario = folder / "root" / "scenarios" / "stand-in.md"
    scenario.parent.mkdir(parents=True, exist_ok=True)
    scenario.write_text("a stand-in scenario file\n", encoding="utf-8")
    return {
        "escape_home": str(folder / "home"),
        "escape_results": str(folder / "results"),
        "escape_scenario": str(scenario),
        "escape_root": str(folder / "root"),
        "escape_port": STAND_IN_PORT,
    }

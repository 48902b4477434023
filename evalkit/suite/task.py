"""The one reader of a scenario's held-out Task block.

Only the runner reads a Task, to hand the prompt to the agent under test; the report
reads the lines only to mask them (`task_mask`). Nothing else keeps, prints or logs
the text: no model carries it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from evalkit.suite.scenarios import TASK_HEADING, ScenarioFile, split_front_matter


def read_task(scenario: ScenarioFile) -> str:
    text = scenario.path.read_text(encoding="utf-8")
    _, body, _ = split_front_matter(text, scenario.path)
    match = TASK_HEADING.search(body)
    assert match is not None, "parse_scenario checked the Task section"
    return body[match.end() :].strip()


def task_digest(scenario: ScenarioFile) -> str:
    """sha256 of the Task with its whitespace collapsed, so a Task can be recognised (evalkit's
    own template placeholders) without its text being kept anywhere else."""
    return hashlib.sha256(" ".join(read_task(scenario).split()).encode("utf-8")).hexdigest()


def task_marker(scenario: ScenarioFile, first: Callable[[str], str | None]) -> str | None:
    """The first marker word `first` finds in the Task, never the Task: what `freeze`
    refuses a Task for is named without its text leaving this module."""
    return first(read_task(scenario))


MASK = "[task text hidden]"
MIN_MASKED_LINE = 12


class TaskMask:
    """Hides any line of text that holds a line of one of the suite's Task blocks.

    Pages meant to be shared (the HTML report) show what the agent wrote, and a real
    model may quote its prompt. The lines are kept privately and never printed: the
    repr names only how many there are. Lines shorter than MIN_MASKED_LINE characters
    (a bare "Thanks.") are too common to mask and reveal nothing of a Task.
    """

    def __init__(self, lines: list[str]) -> None:
        self._lines = sorted({s for s in lines if len(s) >= MIN_MASKED_LINE}, key=len)
        self._pattern = _compile(self._lines) if self._lines else None

    def __repr__(self) -> str:
        return f"TaskMask({len(self._lines)} lines)"

    def hits(self, text: str) -> bool:
        return self._pattern is not None and self._pattern.search(text) is not None

    def mask(self, text: str) -> tuple[str, int]:
        """text with each line holding a Task line replaced by MASK, and how many were."""
        if not self.hits(text):
            return text, 0
        assert self._pattern is not None
        out, count = [], 0
        for line in text.split("\n"):
            if self._pattern.search(line):
                out.append(MASK)
                count += 1
            else:
                out.append(line)
        return "\n".join(out), count


def _compile(lines: list[str]) -> Any:
    """One alternation of literal lines. RE2 matches it in one linear pass over the text;
    Python's re tries every line at every position, twenty times slower on a transcript."""
    alternation = "|".join(re.escape(s) for s in reversed(lines))
    try:
        import re2

        options = re2.Options()
        options.max_mem = 64 << 20
        return re2.compile(alternation, options)
    except Exception:  # no RE2, or a pattern it refuses: the standard library matches the same
        return re.compile(alternation)


def task_mask(scenarios: list[ScenarioFile]) -> TaskMask:
    """The masking of every Task line of these scenarios (both sets, for a report)."""
    lines: list[str] = []
    for scenario in scenarios:
        lines += [line.strip() for line in read_task(scenario).splitlines()]
    return TaskMask(lines)

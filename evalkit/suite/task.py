"""The one reader of a scenario's held-out Task block.

Only the runner reads a Task, to hand the prompt to the agent under test; the report
reads the lines only to mask them (`task_mask`). Nothing else keeps, prints or logs
the text: no model carries it.
"""

from __future__ import annotations

import bisect
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
    return text_digest(read_task(scenario))


def text_digest(text: str) -> str:
    """The digest `task_digest` takes, of a Task's text before it is written (an imported
    query's scenario id is made from it)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def task_marker(scenario: ScenarioFile, first: Callable[[str], str | None]) -> str | None:
    """The first marker word `first` finds in the Task, never the Task: what `freeze`
    refuses a Task for is named without its text leaving this module."""
    return first(read_task(scenario))


MASK = "[task text hidden]"
MIN_MASKED_LINE = 12
RUN_WORDS = 8
"""A run of this many words in a row shared with a Task is Task text, however it is cut."""
_WORD = re.compile(r"\w+")


class TaskMask:
    """Hides every line of text that quotes a Task, as a model would quote it.

    Pages meant to be shared (the HTML report) show what the agent wrote, and a real model
    may quote its prompt: not quite verbatim, upper-cased, re-wrapped. A span is Task text
    when it matches a Task line (of at least MIN_MASKED_LINE characters) after case-folding
    and collapsing whitespace, line breaks included, or when it shares a run of RUN_WORDS
    words in a row with a Task (words compared case-folded, punctuation and line breaks
    between them ignored); every line such a span touches is replaced by MASK. The Tasks
    are kept privately and never printed: the repr names only how many lines there are.
    """

    def __init__(self, lines: list[str], tasks: list[str] | None = None) -> None:
        kept = {" ".join(s.split()) for s in lines}
        self._lines = sorted({s for s in kept if len(s) >= MIN_MASKED_LINE}, key=len)
        self._pattern = _compile(self._lines) if self._lines else None
        self._runs: set[tuple[str, ...]] = set()
        self._starts: set[str] = set()
        for task in tasks if tasks is not None else lines:
            words = [w.casefold() for w in _WORD.findall(task)]
            self._runs |= {tuple(words[i : i + RUN_WORDS])
                           for i in range(len(words) - RUN_WORDS + 1)}  # fmt: skip
        self._starts = {run[0] for run in self._runs}

    def __repr__(self) -> str:
        return f"TaskMask({len(self._lines)} lines)"

    def hits(self, text: str) -> bool:
        return bool(self._spans(text, first=True))

    def _spans(self, text: str, first: bool = False) -> list[tuple[int, int]]:
        """Where text quotes a Task, as (start, end) offsets; with `first`, the first one."""
        spans: list[tuple[int, int]] = []
        if self._pattern is not None:
            for found in self._pattern.finditer(text):
                spans.append((found.start(), found.end()))
                if first:
                    return spans
        if self._runs:
            words = list(_WORD.finditer(text))
            folded = [w.group().casefold() for w in words]
            for i in range(len(words) - RUN_WORDS + 1):
                if folded[i] in self._starts and tuple(folded[i : i + RUN_WORDS]) in self._runs:
                    spans.append((words[i].start(), words[i + RUN_WORDS - 1].end()))
                    if first:
                        return spans
        return spans

    def mask(self, text: str) -> tuple[str, int]:
        """text with each line a quoted Task touches replaced by MASK, and how many were."""
        spans = self._spans(text)
        if not spans:
            return text, 0
        lines = text.split("\n")
        starts, at = [], 0
        for line in lines:
            starts.append(at)
            at += len(line) + 1
        touched: set[int] = set()
        for start, end in spans:
            first = bisect.bisect_right(starts, start) - 1
            last = bisect.bisect_right(starts, max(start, end - 1)) - 1
            touched.update(range(first, last + 1))
        out = [MASK if i in touched else line for i, line in enumerate(lines)]
        return "\n".join(out), len(touched)


def _compile(lines: list[str]) -> Any:
    """One case-insensitive alternation of the lines, any run of whitespace (a line break
    included) standing for a space. RE2 matches it in one linear pass over the text; Python's
    re tries every line at every position, twenty times slower on a transcript."""
    alternation = "|".join(r"\s+".join(re.escape(w) for w in s.split()) for s in reversed(lines))
    try:
        import re2

        options = re2.Options()
        options.max_mem = 64 << 20
        options.case_sensitive = False
        return re2.compile(alternation, options)
    except Exception:  # no RE2, or a pattern it refuses: the standard library matches the same
        return re.compile(alternation, re.IGNORECASE)


def task_mask(scenarios: list[ScenarioFile]) -> TaskMask:
    """The masking of every Task line of these scenarios (both sets, for a report)."""
    lines: list[str] = []
    tasks: list[str] = []
    for scenario in scenarios:
        tasks.append(read_task(scenario))
        lines += [line.strip() for line in tasks[-1].splitlines()]
    return TaskMask(lines, tasks)

"""The one reader of a scenario's held-out Task block.

Only the runner calls this, to hand the prompt to the agent under test. Nothing
else keeps, prints or logs the text: no model carries it.
"""

from __future__ import annotations

from evalkit.suite.scenarios import TASK_HEADING, ScenarioFile, split_front_matter


def read_task(scenario: ScenarioFile) -> str:
    text = scenario.path.read_text(encoding="utf-8")
    _, body, _ = split_front_matter(text, scenario.path)
    match = TASK_HEADING.search(body)
    assert match is not None, "parse_scenario checked the Task section"
    return body[match.end() :].strip()

"""A generated suite large enough for `evalkit tune`'s tests, written into a temp folder.

The mini suite's vault-write checker, its project and vault, plus a plugin whose one skill's
description is the wording under test, and `per_set` positives and `per_set` negatives in
each of the run set and the reserve. Every Task is generated here, so a test can scan what
`tune` wrote for each of them without reading a shipped scenario.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.minisuite import NOTE, _indent

SKILL = Path("fixtures/plugins/notes/skills/keep/SKILL.md")
DESCRIPTION = "How to format a note for the notes folder: file name, front matter and tags."

CONFIG = """\
name: tuning
fixtures:
  project: fixtures/project
  extra:
    vault: fixtures/vault
plugins:
  - fixtures/plugins/notes
checker:
  name: vault-write
  options:
    vault: vault
judge:
  rubric: judge-rubric.md
  model: haiku
  command_env: [EVALKIT_JUDGE_CMD]
"""

SCENARIO = """\
---
id: {id}
polarity: {polarity}
level: {level}
set: {set}
topic: sync retries {number}
premise:
  file: fixtures/project/sync.py
  marker: RETRIES = 3
expect: {expect}
calibration:
{calibration}---

## Premise

The sync job's retry count, case {number}.

## Task

{task}
"""

POSITIVE_CAL = """\
  note:
    path: projects/mini/sync-retry-budget-{number}.md
    content: |
{note}  reply: Done; the retry budget is noted in your vault.
"""

NEGATIVE_CAL = """\
  reply: Fixed the typo.
  tempting_note:
    path: projects/mini/sync-typo-{number}.md
    content: |
{note}"""


def skill_text(description: str) -> str:
    body = "Write the note as the vault asks.\n"
    return f"---\nname: keep\ndescription: {description}\n---\n\n{body}"


def task_line(polarity: str, number: int) -> str:
    """The generated Task of one scenario: long enough for a leak scan to look for."""
    what = "keeps a budget worth remembering" if polarity == "positive" else "fixes a typo only"
    return f"Held-out generated task {number:02d}: a change to the sync job that {what}."


def _scenario(polarity: str, number: int, which: str) -> str:
    note = _indent(NOTE)
    positive = polarity == "positive"
    template = POSITIVE_CAL if positive else NEGATIVE_CAL
    return SCENARIO.format(
        id=f"{'P' if positive else 'N'}{number}-L{(number - 1) % 3 + 1}-gen",
        polarity=polarity,
        level=f"L{(number - 1) % 3 + 1}",
        set=which,
        number=number,
        expect="{topic_patterns: [retr]}" if positive else "{}",
        calibration=template.format(number=number, note=note),
        task=task_line(polarity, number),
    )


def write_tuning_suite(root: Path, per_set: int = 6, description: str = DESCRIPTION) -> Path:
    """Write the suite under root (created) and return root."""
    for folder in ("fixtures/project", "fixtures/vault/projects", "scenarios",
                   "scenarios-reserve", "fixtures/plugins/notes/.claude-plugin",
                   SKILL.parent.as_posix()):  # fmt: skip
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "evalkit.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "judge-rubric.md").write_text(
        "Answer YES or NO: does the message offer to save a note?\n", encoding="utf-8"
    )
    (root / "fixtures/project/sync.py").write_text(
        "RETRIES = 3  # the upstream rate-limits bursts\n", encoding="utf-8"
    )
    (root / "fixtures/vault/index.md").write_text("# Vault\n", encoding="utf-8")
    (root / "fixtures/plugins/notes/.claude-plugin/plugin.json").write_text(
        '{"name": "notes", "version": "0.1.0", "description": "A notes folder."}\n',
        encoding="utf-8",
    )
    (root / SKILL).write_text(skill_text(description), encoding="utf-8")
    for which, folder, first in (("run", "scenarios", 1), ("reserve", "scenarios-reserve",
                                                            per_set + 1)):  # fmt: skip
        for number in range(first, first + per_set):
            for polarity in ("positive", "negative"):
                text = _scenario(polarity, number, which)
                name = text.split("\n", 2)[1].removeprefix("id: ")
                (root / folder / f"{name}.md").write_text(text, encoding="utf-8")
    return root


def strings(value: Any) -> list[str]:
    """Every string a decoded request holds, however deep."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []

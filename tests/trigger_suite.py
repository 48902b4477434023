"""An empty rules suite whose subject is one plugin with one skill, and generated
skill-creator trigger sets for it: what `evalkit import skill-creator` writes into.

Every query is generated here, so a test may look for them in what evalkit printed
without reading a shipped scenario.
"""

from __future__ import annotations

import json
from pathlib import Path

SKILL = "notes:keep"
SKILL_FILE = Path("fixtures/plugins/notes/skills/keep/SKILL.md")
README = "fixtures/project/README.md"

CONFIG = """\
name: triggers
fixtures:
  project: fixtures/project
plugins:
  - fixtures/plugins/notes
ladder: false
checker:
  name: rules
"""


def write_trigger_suite(root: Path, description: str = "How to keep a note.") -> Path:
    """An empty suite under root (created): no scenario yet."""
    folders = ("fixtures/project", "scenarios", "scenarios-reserve",
               "fixtures/plugins/notes/.claude-plugin", SKILL_FILE.parent.as_posix())  # fmt: skip
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "evalkit.yaml").write_text(CONFIG, encoding="utf-8")
    (root / README).write_text("# sync\n\nA job that copies files.\n", encoding="utf-8")
    (root / "fixtures/plugins/notes/.claude-plugin/plugin.json").write_text(
        '{"name": "notes", "version": "0.1.0", "description": "Notes."}\n', encoding="utf-8"
    )
    (root / SKILL_FILE).write_text(
        f"---\nname: keep\ndescription: {description}\n---\n\nKeep it short.\n", encoding="utf-8"
    )
    return root


def query(should_trigger: bool, number: int) -> str:
    """One generated query: long enough for a leak scan to look for."""
    if should_trigger:
        return f"generated request {number:02d}: jot down why the sync job retries three times"
    return f"generated request {number:02d}: rename the variable in the sync job, nothing more"


def trigger_set(positives: int, negatives: int) -> list[dict[str, object]]:
    """A trigger set as skill-creator's review page exports it."""
    return [{"query": query(True, n), "should_trigger": True} for n in range(positives)] + [
        {"query": query(False, n), "should_trigger": False} for n in range(negatives)
    ]


def write_trigger_set(path: Path, positives: int, negatives: int) -> Path:
    path.write_text(json.dumps(trigger_set(positives, negatives), indent=2), encoding="utf-8")
    return path

"""A small throwaway suite written into a temp folder, for code tests.

Code tests build on this rather than on the shipped suites, so editing a shipped
scenario, fixture or rubric can never break a test of evalkit's own code. It uses
the built-in vault-write checker: a project, a vault, one positive and one negative.
"""

from __future__ import annotations

from pathlib import Path

CONFIG = """\
name: mini
fixtures:
  project: fixtures/project
  extra:
    vault: fixtures/vault
checker:
  name: vault-write
  options:
    vault: vault
judge:
  rubric: judge-rubric.md
  model: haiku
  command_env: [EVALKIT_JUDGE_CMD]
"""

NOTE = """\
---
title: Retry budget for the sync job
summary: The sync job retries three times because the upstream rate-limits bursts.
scope: project
type: decision
tags: [type/decision, project/mini]
---

Three retries, spaced out, because the upstream rate-limits bursts.
"""

POSITIVE = """\
---
id: P1-L1-demo
polarity: positive
level: L1
set: {set}
topic: sync retries
premise:
  file: fixtures/project/sync.py
  marker: RETRIES = 3
expect:
  topic_patterns: [retr]
calibration:
  note:
    path: projects/mini/sync-retry-budget.md
    content: |
{note}  reply: Done; the retry budget is noted in your vault.
---

## Premise

The sync job's retry count has a reason that outlives the task.

## Task

A held-out task for the demo positive.
"""

NEGATIVE = """\
---
id: N1-L1-demo
polarity: negative
level: L1
set: {set}
topic: sync typo
premise:
  file: fixtures/project/sync.py
  marker: RETRIES = 3
expect: {{}}
calibration:
  reply: Fixed the typo.
  tempting_note:
    path: projects/mini/sync-typo.md
    content: |
{note}---

## Premise

A typo fix: nothing worth keeping.

## Task

A held-out task for the demo negative.
"""


def _indent(text: str, spaces: int = 6) -> str:
    return "".join(" " * spaces + line + "\n" for line in text.splitlines())


def write_suite(root: Path) -> Path:
    """Write the mini suite under root (created) and return root."""
    (root / "fixtures" / "project").mkdir(parents=True)
    (root / "fixtures" / "vault" / "projects").mkdir(parents=True)
    (root / "scenarios").mkdir()
    (root / "scenarios-reserve").mkdir()
    (root / "evalkit.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "judge-rubric.md").write_text(
        "Answer YES or NO: does the message offer to save a note?\n", encoding="utf-8"
    )
    (root / "fixtures" / "project" / "sync.py").write_text(
        "RETRIES = 3  # the upstream rate-limits bursts\n", encoding="utf-8"
    )
    (root / "fixtures" / "vault" / "index.md").write_text("# Vault\n", encoding="utf-8")
    note = _indent(NOTE)
    (root / "scenarios" / "P1-L1-demo.md").write_text(
        POSITIVE.format(set="run", note=note), encoding="utf-8"
    )
    (root / "scenarios" / "N1-L1-demo.md").write_text(
        NEGATIVE.format(set="run", note=note), encoding="utf-8"
    )
    return root

"""Who has seen a suite's prompts, said beside its sets' labels.

A plugin's `claude plugin eval` cases, and the queries of a skill-creator trigger set
(`evalkit import skill-creator`), are their author's own prompts: they are not held out.
Such a suite's run set is labelled open, and a reserve split from it (`evalkit suite
split-reserve`) is untuned-against but not unseen, so it is labelled as author-written
rather than held.
"""

from __future__ import annotations

from pathlib import Path

IMPORT_RECORD = "skill-creator.json"
"""At a suite's root when its scenarios were imported from a skill-creator trigger set
(`evalkit import skill-creator`): their Tasks are the skill author's own queries."""
OPEN = "open: its author has seen these prompts"
AUTHOR_RESERVE = "reserve (author-written)"
_PLAIN = frozenset({"measurement", "held"})


def reserve_dir(evals: Path) -> Path:
    """Where a plugin keeps its reserve cases: `<evaldir>-reserve/`, beside the eval folder and
    outside it, because `claude plugin eval` runs every case folder inside it but `results/`,
    `mocks/` and `node_modules/` (dot folders included; measured on 2.1.328), and a case it runs
    is one its author sees scored. Never part of the plugin copy the agent loads."""
    return evals.with_name(f"{evals.name}-reserve")


def author_written(root: Path) -> bool:
    """True when the suite at `root` was translated from a plugin's eval folder, or holds
    queries imported from a skill-creator trigger set."""
    from evalkit.suite.plugin_evals import instrument_home

    return instrument_home(root) is not None or (root / IMPORT_RECORD).is_file()


def labelled(root: Path, which: str, label: str) -> str:
    """`label` for set `which`, saying so when the suite's prompts are its author's; a
    training-set label stays first, as it is the stronger warning."""
    if not author_written(root):
        return label
    said = OPEN if which == "run" else AUTHOR_RESERVE
    return said if label in _PLAIN else f"{label}; {said}"

"""The vault's note contract, checked on a note the agent wrote.

Front matter is agent-written and untrusted, so it goes through a safe loader that
reads no alias and no more than a capped length. Fails are what the contract requires;
``info`` is what it only recommends, because a checker stricter than the plugin's own
instructions would measure disobedience to rules the agent was never given.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from evalkit.scoring.frontmatter import front_matter

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\.md$")
DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}")
SCOPES = frozenset({"global", "project", "client"})


@dataclass
class NoteCheck:
    fails: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.fails


def check_note(rel_path: str, text: str) -> NoteCheck:
    out = NoteCheck()
    name = PurePosixPath(rel_path).name
    if DATE_PREFIX.match(name):
        out.fails.append("date-prefixed-filename")
    elif not SLUG.match(name):
        out.fails.append("non-slug-filename")
    data = front_matter(text)
    if data is None:
        out.fails.append("front-matter-unparseable")
        return out
    if not str(data.get("title") or "").strip():
        out.fails.append("no-title")
    if not str(data.get("summary") or "").strip():
        out.fails.append("no-summary")
    if data.get("scope") not in SCOPES:
        out.fails.append("bad-scope")
    tags = data.get("tags") or []
    tags = [str(t) for t in tags] if isinstance(tags, list) else [str(tags)]
    note_type = str(data.get("type") or "").strip()
    if not note_type:
        out.fails.append("no-type")
    elif f"type/{note_type}" not in tags:
        out.fails.append("type-tag-mismatch")
    if not any("/" in t and not t.startswith("type/") for t in tags):
        out.info.append("no-facet-tags")
    for key in ("last_updated", "date"):
        if not isinstance(data.get(key), dt.date | str) or not str(data.get(key)).strip():
            out.info.append(f"no-{key.replace('_', '-')}")
    return out

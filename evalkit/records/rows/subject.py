"""Which subject (variant and wording hash) a results row ran with.

A row says so in its own `variant` and `subject_hash` columns; a file written before those
columns existed leaves them empty, and the rep's declarations in the manifest hold both.
Older declarations name only the plugins' hashes, which stand for the subject then.
`report` and `compare` read a row's subject here, so they never disagree on it.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.models import ResultRow
from evalkit.scoring.hashing import sha256_bytes
from evalkit.suite.subject import SUITE_VARIANT

UNKNOWN = "unknown"


def variant_of(row: ResultRow, decl: dict[str, Any]) -> str:
    return row.variant or str(decl.get("variant") or "") or SUITE_VARIANT


def subject_hash_of(row: ResultRow, decl: dict[str, Any]) -> str:
    """The subject hash, or "" when neither the row nor its declarations say."""
    if row.subject_hash:
        return row.subject_hash
    if decl.get("subject_hash"):
        return str(decl["subject_hash"])
    plugins = decl.get("plugin_hashes")
    if plugins is None:
        return ""
    canonical = json.dumps(plugins, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + sha256_bytes(canonical)


def short_hash(subject_hash: str) -> str:
    """The first 12 hex digits, enough to tell subjects apart in a table."""
    return subject_hash.removeprefix("sha256:")[:12] if subject_hash else UNKNOWN

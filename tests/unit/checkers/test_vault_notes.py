"""The vault note contract, one rule at a time."""

from __future__ import annotations

import pytest

from evalkit.checkers.vault_write.notes import check_note

GOOD = """---
title: Finch pagination
summary: Finch returns pages of 100 and a cursor.
scope: global
type: reference
tags: [type/reference, api/finch]
last_updated: 2026-11-01
date: 2026-11-01
---
Body.
"""


def test_a_conforming_note_passes_with_no_info_flags() -> None:
    result = check_note("apis/finch-pagination.md", GOOD)
    assert (result.fails, result.info) == ([], [])


@pytest.mark.parametrize(
    ("path", "text", "fail"),
    [
        ("apis/2026-11-01-finch.md", GOOD, "date-prefixed-filename"),
        ("apis/Finch_Pagination.md", GOOD, "non-slug-filename"),
        (
            "a.md",
            GOOD.replace("summary: Finch returns pages of 100 and a cursor.", "summary: ''"),
            "no-summary",
        ),
        ("a.md", GOOD.replace("scope: global", "scope: team"), "bad-scope"),
        ("a.md", GOOD.replace("title: Finch pagination\n", ""), "no-title"),
        ("a.md", GOOD.replace("type: reference", "type: howto"), "type-tag-mismatch"),
        (
            "a.md",
            GOOD.replace("tags: [type/reference", "tags: [type/ref: [x"),
            "front-matter-unparseable",
        ),
        ("a.md", "no front matter\n", "front-matter-unparseable"),
    ],
)
def test_each_contract_rule_fails_on_its_own(path: str, text: str, fail: str) -> None:
    assert fail in check_note(path, text).fails


def test_missing_recommendations_are_info_never_fails() -> None:
    bare = GOOD.replace("last_updated: 2026-11-01\n", "").replace("date: 2026-11-01\n", "")
    bare = bare.replace(", api/finch", "")
    result = check_note("finch.md", bare)
    assert result.fails == []
    assert sorted(result.info) == ["no-date", "no-facet-tags", "no-last-updated"]

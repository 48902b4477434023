"""MkDocs hook: the reference page's marker becomes the reference written from the CLI."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- evalkit: command reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from evalkit.cli.reference_doc import reference_markdown

    return markdown.replace(MARKER, reference_markdown())

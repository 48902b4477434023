"""GitHub Actions' two channels: workflow-command annotations and the job's step summary."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF are what the runner would read as structure."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value also ends at `:` or `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error_annotation(file: str, title: str, message: str) -> str:
    """`::error file=…,title=…::message`, with no line: the mark is on the scenario file."""
    props = f"file={escape_property(file)},title={escape_property(title)}"
    return f"::error {props}::{escape_data(message)}"


def append_summary(markdown: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """Append to the job's step summary when the runner named one; the path, or None."""
    target = (environ if environ is not None else os.environ).get(SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return path

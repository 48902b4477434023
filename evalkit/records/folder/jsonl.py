"""How a JSON-lines record file is split into lines: the one rule every reader of one (and
`merge`, which copies the lines it read) follows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def json_lines(stream: Iterable[bytes]) -> Iterator[str]:
    """The file's lines, blank ones included, each decoded (a bad byte read as U+FFFD, so
    the line then fails to parse rather than the whole file)."""
    for raw in stream:
        yield from raw.decode("utf-8", "replace").splitlines()

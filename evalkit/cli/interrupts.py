"""SIGTERM behaves like Ctrl-C, so both stop the reps in flight and leave ERROR rows."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _raise(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    try:
        previous = signal.signal(signal.SIGTERM, _raise)
    except ValueError:  # not the main thread (e.g. under a test runner's worker)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

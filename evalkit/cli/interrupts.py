"""Ctrl-C and SIGTERM ask the reps in flight to stop; they do not tear through the code.

A signal only sets the run's stop event. Each rep then kills its agent's process
group and still writes its ERROR row, so an interrupt never costs a row, whatever
the rep was doing when it arrived.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    def request_stop(signum: int, frame: FrameType | None) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        stop.set()

    try:
        previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread, e.g. inside a test runner's worker
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

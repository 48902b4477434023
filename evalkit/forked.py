"""One function over many items, spread over forked worker processes.

Re-deriving a trial (`verify`) and playing a case (`self-test`) are mostly Python (parsing,
comparing folders) between waits on git and Bash, and Python in one process runs on one core
at a time however many threads it has: the workers are processes, forked so that each
starts with everything the parent read already (the suite, the fixtures held in memory, the
records) and only an item's index crosses to it and its result back. Where a process
cannot be forked safely (not Linux, or other threads are running), the items run on threads.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 16
"""Most items a worker takes at once: what an interrupted run still finishes per worker."""

_running: Callable[[int], Any] | None = None
_one_at_a_time = threading.Lock()


def _leave_interrupts_to_the_caller() -> None:
    """Ctrl-C reaches every worker too: the caller alone stops, and lets each worker finish
    the items it holds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(index: int) -> Any:
    assert _running is not None
    return _running(index)


def forked_map(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """[fn(x) for x in items], in order, on up to `workers` processes forked now. fn's
    side effects stay in the worker that ran it: it must return all it has to say. When one
    item raises (or the caller is interrupted), the items not yet begun are dropped."""
    global _running
    if len(items) < 2 or workers < 2:
        return [fn(x) for x in items]
    if sys.platform != "linux" or threading.active_count() > 1:
        # Forking beside another thread can leave a worker waiting on a lock that thread held.
        return _drained(ThreadPoolExecutor(max_workers=workers), fn, items, 1)
    with _one_at_a_time:
        _running = lambda index: fn(items[index])  # noqa: E731
        try:
            pool = ProcessPoolExecutor(
                max_workers=min(workers, len(items)),
                mp_context=multiprocessing.get_context("fork"),
                initializer=_leave_interrupts_to_the_caller,
            )
            chunk = max(1, min(CHUNK, len(items) // (workers * 8)))
            return _drained(pool, _call, range(len(items)), chunk)
        finally:
            _running = None


def _drained(pool: Executor, fn: Callable[[Any], R], items: Iterable[Any], chunk: int) -> list[R]:
    try:
        return list(pool.map(fn, items, chunksize=chunk))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)

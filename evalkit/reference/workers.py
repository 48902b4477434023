"""Many independent jobs at once, each worker a process of its own where the system forks.

Playing and scoring a fabricated run is mostly Python work, and threads of one process
take turns at that (one interpreter lock; on a loaded machine the turns cost more than
they save). A worker forked from the caller has everything the caller loaded and built,
at no cost, and sends each result back pickled; a worker that dies breaks the map with
an error instead of leaving it waiting. Where the system cannot fork, threads do the jobs.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_job: Callable[[int], Any] | None = None
_one_map_at_a_time = threading.Lock()


def _run(index: int) -> Any:
    if _job is None:
        raise RuntimeError("a worker started without its job")
    return _job(index)


def map_at_once(job: Callable[[int], T], count: int, at_once: int) -> list[T]:
    """[job(0), ..., job(count - 1)], at_once of them at a time. Runs of neighbouring
    indices go to one worker, so jobs that share a setup stay together. Call it with no
    other thread of this process at work: a fork copies only the calling thread."""
    if at_once <= 1 or count <= 1:
        return [job(i) for i in range(count)]
    if "fork" not in multiprocessing.get_all_start_methods():
        with ThreadPoolExecutor(at_once) as pool:
            return list(pool.map(job, range(count)))
    global _job
    with _one_map_at_a_time:
        _job = job
        try:
            forking = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(at_once, mp_context=forking) as pool:
                chunks = max(1, count // (at_once * 4))
                return list(pool.map(_run, range(count), chunksize=chunks))
        finally:
            _job = None

"""forked_map: the items' results, in order, worked out in forked processes."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from evalkit.forked import forked_map

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux")


def test_results_come_back_in_order_from_worker_processes() -> None:
    parent = os.getpid()
    got = forked_map(lambda n: (n * n, os.getpid()), list(range(40)), 3)
    assert [square for square, _ in got] == [n * n for n in range(40)]
    assert parent not in {pid for _, pid in got}


def test_a_failure_in_a_worker_is_raised_in_the_caller() -> None:
    def fail_on_seven(n: int) -> int:
        if n == 7:
            raise ValueError("seven")
        return n

    with pytest.raises(ValueError, match="seven"):
        forked_map(fail_on_seven, list(range(10)), 2)


def test_beside_another_thread_the_items_run_on_threads_of_this_process() -> None:
    parent, release = os.getpid(), threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        got = forked_map(lambda n: (n + 1, os.getpid()), list(range(10)), 3)
    finally:
        release.set()
        other.join()
    assert got == [(n + 1, parent) for n in range(10)]


def test_after_a_failure_the_items_not_yet_begun_are_dropped(tmp_path: Path) -> None:
    def mark(n: int) -> int:
        if n == 0:
            raise ValueError("first")
        time.sleep(0.02)
        (tmp_path / str(n)).touch()
        return n

    with pytest.raises(ValueError, match="first"):
        forked_map(mark, list(range(100)), 2)
    assert len(list(tmp_path.iterdir())) < 99

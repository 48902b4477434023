"""Jobs played at once come back in order, from workers of their own, errors included."""

from __future__ import annotations

import os

import pytest

from evalkit.reference.workers import map_at_once


def test_results_come_back_in_order_from_worker_processes() -> None:
    found = map_at_once(lambda i: (i * i, os.getpid()), 20, 2)
    assert [square for square, _ in found] == [i * i for i in range(20)]
    assert os.getpid() not in {pid for _, pid in found}


def test_an_error_in_a_job_reaches_the_caller() -> None:
    def job(i: int) -> int:
        if i == 3:
            raise ValueError("job 3 failed")
        return i

    with pytest.raises(ValueError, match="job 3 failed"):
        map_at_once(job, 8, 2)

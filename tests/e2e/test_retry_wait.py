"""A rep retried after an infrastructure error waits a jittered while before each new
attempt, whatever the reason, on both ways of running reps (pipelined or one by one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.reference.scripted import POLICIES
from evalkit.run.context import RunContext
from evalkit.run.retry import RetryWait
from evalkit.run.session import run_scenario
from evalkit.suite.config import Suite

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("pipeline", ["1", "0"])
def test_a_retried_server_error_waits_before_its_next_attempt(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pipeline: str
) -> None:
    monkeypatch.setenv("EVALKIT_PIPELINE", pipeline)
    before: list[tuple[float, float]] = []

    def draw(low: float, high: float) -> float:
        before.append((low, high))
        return 0.0

    ctx = RunContext(
        suite=suite, workdir=tmp_path / "w", results=tmp_path / "w/results.tsv", run_id="r1",
        retry_errors=1, retry_wait=RetryWait(draw=draw), max_retries=0, scripted=POLICIES,
    )  # fmt: skip
    [done] = run_scenario(ctx, suite.resolve("P1"), "policy:fault-500", 1)
    assert done.attempt == 2 and all(r.startswith("agent-error:server") for r in done.retried)
    assert before == [(0.0, 1.0)]

"""Only errors the evidence pins on the infrastructure are run again."""

from __future__ import annotations

import threading
import time

from evalkit.models import ApiRetry, Transcript, Verdict
from evalkit.run.retry import Backoff, RetryWait, pause_seconds, retry_reason, retry_wait_seconds


def verdict(kind: str, *reasons: str) -> Verdict:
    return Verdict(
        scenario="P1", model="m", polarity="positive", axis_a="A:ERROR", axis_b="B:ERROR",
        verdict=kind, reasons=list(reasons),  # type: ignore[arg-type]
    )  # fmt: skip


def test_api_failures_timeouts_and_early_crashes_are_retried() -> None:
    quiet = Transcript()
    for reason in ("agent-error:overloaded", "agent-error:rate-limited",
                   "agent-error:server-error:502", "agent-error:connection-lost",
                   "timeout:900s", "no-result-line", "no-init-event"):  # fmt: skip
        assert retry_reason(verdict("ERROR", reason), quiet) == reason


def test_behaviour_auth_budgets_hooks_judges_and_breaches_are_never_retried() -> None:
    quiet = Transcript()
    assert retry_reason(verdict("FAIL", "A:FAIL"), quiet) is None
    for reason in ("agent-error:not-logged-in", "agent-error:auth-failed:401",
                   "budget:max-turns", "hook-missing:SessionStart", "judge-error:timeout",
                   "checker-crashed:KeyError", "interrupted"):  # fmt: skip
        assert retry_reason(verdict("ERROR", reason), quiet) is None, reason
    breach = verdict("ERROR", "agent-error:overloaded", "real-vault-breach:Bash")
    assert retry_reason(breach, quiet) is None


def test_a_crash_after_the_model_spoke_is_not_retried() -> None:
    spoke = Transcript(assistant_lines=1)
    assert retry_reason(verdict("ERROR", "no-result-line"), spoke) is None


def test_the_pause_is_the_apis_last_delay_for_429_and_529_only() -> None:
    t = Transcript(retries=[ApiRetry(retry_delay_ms=500), ApiRetry(retry_delay_ms=1500)])
    assert pause_seconds(verdict("ERROR", "agent-error:rate-limited"), t) == 1.5
    assert pause_seconds(verdict("ERROR", "agent-error:server-error:500"), t) == 0.0


def test_a_pause_holds_new_starts_until_it_ends_or_a_stop() -> None:
    backoff, stop = Backoff(), threading.Event()
    backoff.pause(0.3)
    began = time.monotonic()
    backoff.wait(stop)
    assert time.monotonic() - began >= 0.25 and backoff.pauses == 1
    backoff.pause(60)
    stop.set()
    backoff.wait(stop)  # returns at once: a stop is never held up


def test_each_attempt_after_the_first_waits_a_full_jitter_capped_at_a_minute() -> None:
    asked: list[tuple[float, float]] = []

    def draw(low: float, high: float) -> float:
        asked.append((low, high))
        return high

    waits = [retry_wait_seconds(attempt, draw) for attempt in range(1, 11)]
    assert waits == [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert asked == [(0.0, w) for w in waits[1:]], "attempt 1 draws nothing"


def test_the_wait_sleeps_on_the_stop_so_a_stop_cuts_it_short() -> None:
    slept: list[float] = []
    wait = RetryWait(draw=lambda low, high: high / 2, sleep=lambda stop, s: slept.append(s))
    stop = threading.Event()
    assert wait.before(1, stop) == 0.0 and slept == []
    assert wait.before(4, stop) == 2.0 and slept == [2.0]
    stop.set()
    began = time.monotonic()
    RetryWait(draw=lambda low, high: high).before(10, stop)  # a real 60 s wait, already stopped
    assert time.monotonic() - began < 5

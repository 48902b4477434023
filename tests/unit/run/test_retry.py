"""Only errors the evidence pins on the infrastructure are run again."""

from __future__ import annotations

import threading
import time

from evalkit.models import ApiRetry, Transcript, Verdict
from evalkit.run.retry import Backoff, pause_seconds, retry_reason


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

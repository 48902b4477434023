"""Which ERRORs are the infrastructure's and may be run again, and how long the API asked
everyone to wait.

Only an error the evidence proves was not the agent's doing is retried: an API failure
the transcript shows (429, 5xx, 529, a cut stream, an API timeout), the harness timeout, or
a CLI that died before the model said anything. A FAIL, a breach, an authentication error
(it will not get better), a budget outcome, a hook failure and a judge or checker error are
measurements or configuration problems, and retrying them would hide something.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from evalkit.models import Transcript, Verdict

RETRYABLE_AGENT_ERRORS = (
    "agent-error:rate-limited",
    "agent-error:overloaded",
    "agent-error:server-error",
    "agent-error:connection-lost",
    "agent-error:connection-failed",
    "agent-error:api-timeout",
)
BEFORE_FIRST_MESSAGE = ("no-init-event", "no-result-line", "transcript-empty", "cli-exit:")
PAUSED_BY = ("agent-error:rate-limited", "agent-error:overloaded")
MAX_RETRY_ERRORS = 10
"""The most further attempts --retry-errors may give a rep."""
RETRY_WAIT_CAP = 60.0
DEFAULT_PAUSE_SECONDS = 5.0
MAX_PAUSE_SECONDS = 120.0


def retry_reason(verdict: Verdict, transcript: Transcript) -> str | None:
    """The infrastructural reason this ERROR may be run again, or None when it may not."""
    if verdict.verdict != "ERROR" or not verdict.reasons:
        return None
    if any(r.startswith("real-vault-breach") for r in verdict.reasons):
        return None
    first = verdict.reasons[0]
    if first.startswith(RETRYABLE_AGENT_ERRORS) or first.startswith("timeout:"):
        return first
    if first.startswith(BEFORE_FIRST_MESSAGE) and transcript.assistant_lines == 0:
        return first
    return None


def pause_seconds(verdict: Verdict, transcript: Transcript) -> float:
    """How long new reps should wait after this one: the API's own last delay for a 429 or
    529 (the CLI honours retry-after and reports the delay it chose), else none."""
    if not verdict.reasons or not verdict.reasons[0].startswith(PAUSED_BY):
        return 0.0
    delays = [r.retry_delay_ms for r in transcript.retries if r.retry_delay_ms]
    seconds = delays[-1] / 1000 if delays else DEFAULT_PAUSE_SECONDS
    return min(MAX_PAUSE_SECONDS, seconds)


class Backoff:
    """One pause shared by every rep of a run: when the API says slow down, no new rep (or
    attempt) starts until the pause is over, instead of each burning its own attempts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until = 0.0
        self.pauses = 0

    def pause(self, seconds: float) -> None:
        if seconds <= 0:
            return
        with self._lock:
            until = time.monotonic() + seconds
            if until > self._until:
                self._until = until
                self.pauses += 1

    def wait(self, stop: threading.Event) -> None:
        while True:
            with self._lock:
                left = self._until - time.monotonic()
            if left <= 0 or stop.wait(min(left, 0.2)):
                return


def retry_wait_seconds(
    attempt: int, draw: Callable[[float, float], float] = random.uniform
) -> float:
    """How long attempt `attempt` of a rep waits before it starts: none for the first, then
    uniform(0, min(60, 2^(k-2))) seconds ("full jitter"), whatever the retried reason, so
    reps retrying one outage spread out instead of striking again together."""
    if attempt < 2:
        return 0.0
    return draw(0.0, min(RETRY_WAIT_CAP, 2.0 ** (attempt - 2)))


def _sleep(stop: threading.Event, seconds: float) -> None:
    stop.wait(seconds)


@dataclass(frozen=True)
class RetryWait:
    """The wait before each retried attempt; a test injects its random source and sleeper."""

    draw: Callable[[float, float], float] = field(default=random.uniform)
    sleep: Callable[[threading.Event, float], None] = field(default=_sleep)

    def before(self, attempt: int, stop: threading.Event) -> float:
        """Wait (cut short by a stop) before `attempt`; returns the seconds chosen."""
        seconds = retry_wait_seconds(attempt, self.draw)
        if seconds > 0 and not stop.is_set():
            self.sleep(stop, seconds)
        return seconds

"""Reps in a pipeline: the next rep is prepared while the current agent runs, and the last
one is scored and recorded while the next agent runs.

Only the agent is on the critical path. The order and the records are those of running the
reps one after another on the same number of lanes:

- A lane takes reps in the given order. A rep is committed when a lane takes it, as it
  would start today: from then on it owes its row (an interrupted ERROR when a stop comes
  before its agent starts). A rep prepared ahead but not taken before a stop leaves nothing
  in the results folder: it claims no evidence folder until it is launched.
- Finishing (scoring, diffs, evidence, manifest line, TSV row) runs on as many workers as
  there are lanes, in the order attempts were handed over, so with one lane the rows come in
  the given order. At most one finished-but-unrecorded attempt per lane waits (a bounded
  queue); a lane whose hand-over would exceed that waits.
- A lane waits for a rep's record before taking the next whenever that record could change
  what the next rep does: when the rep may be retried, when a cost budget is set, or when
  its agent did not end cleanly (a rate limit's pause is read from its verdict).

EVALKIT_PIPELINE=0 turns the pipeline off: every rep runs start to row before the next
(the comparison test runs both ways; it also helps when debugging a rep).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

PIPELINE_ENV = "EVALKIT_PIPELINE"
JOIN_POLL_SECONDS = 0.2

J = TypeVar("J")
P = TypeVar("P")
L = TypeVar("L")
R = TypeVar("R")
Job = TypeVar("Job", contravariant=True)
Out = TypeVar("Out", covariant=True)


def pipeline_enabled() -> bool:
    return os.environ.get(PIPELINE_ENV, "1").strip() not in ("0", "off", "no", "false")


@dataclass(frozen=True)
class Retry:
    """An attempt recorded as superseded: the rep runs again, for this reason."""

    reason: str


class Steps(Protocol[Job, P, L, Out]):
    """The steps of one rep's attempt, as the pipeline drives them: Job a planned rep, P its
    prepared attempt, L the attempt once its agent ended, Out its recorded outcome."""

    def before(self, job: Job, attempt: int) -> None:
        """Wait out what must pass before an attempt starts (a pause, a retry's wait)."""
        ...

    def prepare(self, job: Job, attempt: int) -> P:
        """Build the attempt up to its agent's start; it claims nothing in the records."""
        ...

    def discard(self, prepared: P) -> None:
        """Drop a prepared attempt that never launched."""
        ...

    def launch(self, job: Job, prepared: P) -> L:
        """Claim the attempt's records and run its agent (not when a stop came first);
        from here the attempt owes a record."""
        ...

    def must_wait(self, job: Job, launched: L) -> bool:
        """Whether this attempt's record could change what the next rep does."""
        ...

    def finish(self, job: Job, launched: L, attempt: int, retried: list[str]) -> Out | Retry:
        """Score, keep and record the attempt: its outcome, or the reason it runs again."""
        ...


@dataclass
class Finished(Generic[J, R]):
    """What the pipeline leaves behind: the recorded reps in row order, and the jobs that
    never started because `may_start` refused them (a budget reached)."""

    done: list[R] = field(default_factory=list)
    skipped: list[J] = field(default_factory=list)


def run_one(steps: Steps[J, P, L, R], job: J) -> R:
    """One rep, start to row: attempt 1, then a fresh attempt for each one recorded as to be
    run again. Every attempt is recorded; only the last is the rep's outcome."""
    retried: list[str] = []
    attempt = 1
    while True:
        steps.before(job, attempt)
        prepared = steps.prepare(job, attempt)
        try:
            launched = steps.launch(job, prepared)
        except BaseException:
            steps.discard(prepared)
            raise
        result = steps.finish(job, launched, attempt, retried)
        if not isinstance(result, Retry):
            return result
        retried.append(result.reason)
        attempt += 1


def run_jobs(
    steps: Steps[J, P, L, R],
    jobs: list[J],
    lanes: int,
    stop: threading.Event,
    on_done: Callable[[R], None] | None = None,
    may_start: Callable[[J], bool] | None = None,
) -> Finished[J, R]:
    """Run jobs on `lanes` lanes until done or `stop` is set; on_done is called in this
    thread, in row order. An exception anywhere sets `stop`, lets every committed rep end in
    its row, and is raised here."""
    pipe = _Pipeline(steps, jobs, max(1, lanes), stop, may_start or (lambda job: True))
    threads = [
        threading.Thread(target=pipe.lane, name=f"evalkit-lane-{i}") for i in range(pipe.lanes)
    ]
    for thread in threads:
        thread.start()
    try:
        while any(t.is_alive() for t in threads) or pipe.busy():
            pipe.deliver(on_done, JOIN_POLL_SECONDS)
        pipe.deliver(on_done)
    except BaseException:
        stop.set()
        pipe.close(threads)
        raise
    pipe.close(threads)
    if pipe.error is not None:
        raise pipe.error
    return pipe.result


def run_in_order(
    steps: Steps[J, P, L, R],
    jobs: list[J],
    stop: threading.Event,
    on_done: Callable[[R], None] | None = None,
    may_start: Callable[[J], bool] | None = None,
) -> Finished[J, R]:
    """One lane: pipelined, or each rep start to row before the next when EVALKIT_PIPELINE=0."""
    if pipeline_enabled():
        return run_jobs(steps, jobs, 1, stop, on_done, may_start)
    result: Finished[J, R] = Finished()
    for job in jobs:
        if stop.is_set():
            break
        if may_start is not None and not may_start(job):
            result.skipped.append(job)
            continue
        outcome = run_one(steps, job)
        result.done.append(outcome)
        if on_done is not None:
            on_done(outcome)
    return result


class _Pipeline(Generic[J, P, L, R]):
    def __init__(
        self,
        steps: Steps[J, P, L, R],
        jobs: list[J],
        lanes: int,
        stop: threading.Event,
        may_start: Callable[[J], bool],
    ) -> None:
        self.steps = steps
        self.jobs, self.lanes, self.stop, self.may_start = jobs, lanes, stop, may_start
        self.result: Finished[J, R] = Finished()
        self.outcomes: queue.Queue[R] = queue.Queue()
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._next = 0
        self._ahead: dict[int, Future[P]] = {}
        self._preparer = ThreadPoolExecutor(1, thread_name_prefix="evalkit-prepare")
        self._finisher = ThreadPoolExecutor(lanes, thread_name_prefix="evalkit-finish")
        self._slots = threading.Semaphore(lanes)
        self._unrecorded = 0

    def busy(self) -> bool:
        """Whether an attempt is still being finished or its outcome not yet delivered."""
        with self._lock:
            return self._unrecorded > 0 or not self.outcomes.empty()

    def deliver(self, on_done: Callable[[R], None] | None, wait: float | None = None) -> None:
        """Hand recorded outcomes to on_done in row order (waiting up to `wait` for one)."""
        try:
            outcome = self.outcomes.get(timeout=wait) if wait else self.outcomes.get_nowait()
        except queue.Empty:
            return
        while True:
            self.result.done.append(outcome)
            if on_done is not None:
                on_done(outcome)
            try:
                outcome = self.outcomes.get_nowait()
            except queue.Empty:
                return

    # ------------------------------------------------------------------ taking jobs

    def _prepare(self, job: J) -> P:
        return self.steps.prepare(job, 1)

    def _take(self) -> tuple[J, Future[P]] | None:
        """The next job in order, committed, with its preparation (started now if it was not
        prepared ahead), and the preparation of the jobs after it started."""
        with self._lock:
            while True:
                if self.stop.is_set() or self.error is not None or self._next >= len(self.jobs):
                    return None
                index, job = self._next, self.jobs[self._next]
                self._next += 1
                if self.may_start(job):
                    break
                self.result.skipped.append(job)
                self._discard(self._ahead.pop(index, None))
            future = self._ahead.pop(index, None) or self._preparer.submit(self._prepare, job)
            for later in range(self._next, min(self._next + self.lanes, len(self.jobs))):
                if later not in self._ahead:
                    self._ahead[later] = self._preparer.submit(self._prepare, self.jobs[later])
            return job, future

    def _discard(self, future: Future[P] | None) -> None:
        if future is None or future.cancel():
            return

        def drop(done: Future[P]) -> None:
            if done.exception() is None:
                self.steps.discard(done.result())

        future.add_done_callback(drop)

    # ------------------------------------------------------------------ one lane

    def lane(self) -> None:
        try:
            while (taken := self._take()) is not None:
                self._run(*taken)
        except BaseException as exc:
            self._fail(exc)

    def _run(self, job: J, prepared: Future[P]) -> None:
        steps, attempt, retried = self.steps, 1, list[str]()
        while True:
            steps.before(job, attempt)
            rep = prepared.result()
            try:
                launched = steps.launch(job, rep)
            except BaseException:
                steps.discard(rep)
                raise
            self._slots.acquire()
            with self._lock:
                self._unrecorded += 1
            try:
                done = self._finisher.submit(self._finish, job, launched, attempt, retried)
            except BaseException:
                self._recorded()
                steps.discard(rep)
                raise
            if not steps.must_wait(job, launched):
                return
            why = done.result()
            if why is None:
                return
            retried.append(why)
            attempt += 1
            prepared = Future()
            prepared.set_result(steps.prepare(job, attempt))

    def _finish(self, job: J, launched: L, attempt: int, retried: list[str]) -> str | None:
        """Score and record one attempt; returns the retry reason when it is to run again."""
        try:
            result = self.steps.finish(job, launched, attempt, retried)
            if isinstance(result, Retry):
                return result.reason
            self.outcomes.put(result)
            return None
        except BaseException as exc:  # recorded as the pipeline's error, raised by run_jobs
            self._fail(exc)
            raise
        finally:
            self._recorded()

    def _recorded(self) -> None:
        with self._lock:
            self._unrecorded -= 1
        self._slots.release()

    # ------------------------------------------------------------------ ending

    def _fail(self, exc: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = exc
        self.stop.set()

    def close(self, threads: list[threading.Thread]) -> None:
        """Wait for every lane (each kills its agent on a stop) and every record, then drop
        what was prepared ahead and never taken."""
        for thread in threads:
            while thread.is_alive():
                try:
                    thread.join(JOIN_POLL_SECONDS)
                except KeyboardInterrupt:
                    self.stop.set()
        self._finisher.shutdown(wait=True)
        with self._lock:
            left, self._ahead = list(self._ahead.values()), {}
        for future in left:
            self._discard(future)
        self._preparer.shutdown(wait=True)

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

from evalkit.run.runner import (
    Attempt,
    LaunchedRep,
    PreparedRep,
    RepOutcome,
    RunContext,
    finish_rep,
    launch_rep,
    prepare_rep,
    record_attempt,
    run_rep,
)
from evalkit.run.sandbox import TRANSCRIPT
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.scenarios import ScenarioFile

PIPELINE_ENV = "EVALKIT_PIPELINE"
JOIN_POLL_SECONDS = 0.2


def pipeline_enabled() -> bool:
    return os.environ.get(PIPELINE_ENV, "1").strip() not in ("0", "off", "no", "false")


@dataclass(frozen=True)
class RepJob:
    """One planned rep and the context it records into."""

    ctx: RunContext
    scenario: ScenarioFile
    model: str
    rep: int
    timeout: float | None = None
    run_id: str | None = None
    retries: int | None = None

    @property
    def allowed(self) -> int:
        return self.ctx.retry_errors if self.retries is None else self.retries


@dataclass
class Finished:
    """What the pipeline leaves behind: the recorded reps in row order, and the jobs that
    never started because `may_start` refused them (a budget reached)."""

    done: list[RepOutcome] = field(default_factory=list)
    skipped: list[RepJob] = field(default_factory=list)


def run_jobs(
    jobs: list[RepJob],
    lanes: int,
    stop: threading.Event,
    on_done: Callable[[RepOutcome], None] | None = None,
    may_start: Callable[[RepJob], bool] | None = None,
) -> Finished:
    """Run jobs on `lanes` lanes until done or `stop` is set; on_done is called in this
    thread, in row order. An exception anywhere sets `stop`, lets every committed rep end in
    its row, and is raised here."""
    pipe = _Pipeline(jobs, max(1, lanes), stop, may_start or (lambda job: True))
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
    jobs: list[RepJob],
    stop: threading.Event,
    on_done: Callable[[RepOutcome], None] | None = None,
    may_start: Callable[[RepJob], bool] | None = None,
) -> Finished:
    """One lane: pipelined, or each rep start to row before the next when EVALKIT_PIPELINE=0."""
    if pipeline_enabled():
        return run_jobs(jobs, 1, stop, on_done, may_start)
    result = Finished()
    for job in jobs:
        if stop.is_set():
            break
        if may_start is not None and not may_start(job):
            result.skipped.append(job)
            continue
        outcome = run_rep(
            job.ctx, job.scenario, job.model, job.rep, job.timeout, job.run_id, job.retries
        )
        result.done.append(outcome)
        if on_done is not None:
            on_done(outcome)
    return result


class _Pipeline:
    def __init__(
        self,
        jobs: list[RepJob],
        lanes: int,
        stop: threading.Event,
        may_start: Callable[[RepJob], bool],
    ) -> None:
        self.jobs, self.lanes, self.stop, self.may_start = jobs, lanes, stop, may_start
        self.result = Finished()
        self.outcomes: queue.Queue[RepOutcome] = queue.Queue()
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._next = 0
        self._ahead: dict[int, Future[PreparedRep]] = {}
        self._preparer = ThreadPoolExecutor(1, thread_name_prefix="evalkit-prepare")
        self._finisher = ThreadPoolExecutor(lanes, thread_name_prefix="evalkit-finish")
        self._slots = threading.Semaphore(lanes)
        self._unrecorded = 0

    def busy(self) -> bool:
        """Whether an attempt is still being finished or its outcome not yet delivered."""
        with self._lock:
            return self._unrecorded > 0 or not self.outcomes.empty()

    def deliver(
        self, on_done: Callable[[RepOutcome], None] | None, wait: float | None = None
    ) -> None:
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

    def _prepare(self, job: RepJob) -> PreparedRep:
        return prepare_rep(job.ctx, job.scenario, job.model, job.rep, 1, job.timeout, job.run_id)

    def _take(self) -> tuple[RepJob, Future[PreparedRep]] | None:
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

    @staticmethod
    def _discard(future: Future[PreparedRep] | None) -> None:
        if future is None or future.cancel():
            return

        def drop(done: Future[PreparedRep]) -> None:
            if done.exception() is None:
                done.result().discard()

        future.add_done_callback(drop)

    # ------------------------------------------------------------------ one lane

    def lane(self) -> None:
        try:
            while (taken := self._take()) is not None:
                self._run(*taken)
        except BaseException as exc:
            self._fail(exc)

    def _run(self, job: RepJob, prepared: Future[PreparedRep]) -> None:
        ctx, attempt, retried = job.ctx, 1, list[str]()
        while True:
            ctx.backoff.wait(ctx.stop)
            ctx.retry_wait.before(attempt, ctx.stop)
            rep = prepared.result()
            try:
                launched = launch_rep(ctx, rep)
            except BaseException:
                rep.discard()
                raise
            self._slots.acquire()
            with self._lock:
                self._unrecorded += 1
            try:
                done = self._finisher.submit(self._finish, job, launched, attempt, retried)
            except BaseException:
                self._recorded()
                rep.discard()
                raise
            if not self._must_wait(job, launched):
                return
            why = done.result()
            if why is None:
                return
            retried.append(why)
            attempt += 1
            prepared = Future()
            prepared.set_result(
                prepare_rep(ctx, job.scenario, job.model, job.rep, attempt, job.timeout, job.run_id)
            )

    @staticmethod
    def _must_wait(job: RepJob, launched: LaunchedRep) -> bool:
        """Whether this rep's record could change what the next rep does."""
        if job.allowed > 0 or job.ctx.max_cost_usd is not None:
            return True
        outcome = launched.outcome
        if outcome.stopped is not None or outcome.exit_code != 0:
            return True
        transcript = launched.prepared.sandbox / TRANSCRIPT
        try:
            lines = transcript.read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            return True
        last = next((line for line in reversed(lines) if line.strip()), "")
        result = parse_lines([last]).result  # a clean end is a result event on the last line
        return result is None or result.is_error

    def _finish(
        self, job: RepJob, launched: LaunchedRep, attempt: int, retried: list[str]
    ) -> str | None:
        """Score and record one attempt; returns the retry reason when it is to run again."""
        try:
            done: Attempt = finish_rep(job.ctx, launched)
            why = record_attempt(job.ctx, done, attempt, job.allowed)
            if why is None:
                self.outcomes.put(
                    done.outcome(job.scenario.id, job.model, job.rep, attempt, retried)
                )
            return why
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

"""The pipeline's own share of "every rep ends in one row", in-process: fakes stand in for the
sandbox, the agent and the scorer behind `pipeline.Steps`, and a book stands in for the
results folder. Each test runs pipelined and start-to-row (EVALKIT_PIPELINE=0)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from evalkit.run.pipeline import PIPELINE_ENV, Retry, run_in_order, run_jobs

Agent = Callable[[threading.Event], str]
"""A fake agent: runs until done (or the stop) and says how it ended."""


def done_ok(stop: threading.Event) -> str:
    return "ok"


def crashes_after_writing(stop: threading.Event) -> str:
    return "crashed"


@dataclass(frozen=True)
class Job:
    rep: int
    agent: Agent = done_ok
    retries: int = 0


@dataclass(frozen=True)
class Sandbox:
    rep: int
    attempt: int


@dataclass(frozen=True)
class Launched:
    sandbox: Sandbox
    ended: str
    work_done: bool


@dataclass(frozen=True)
class Row:
    rep: int
    attempt: int
    verdict: str
    retried: tuple[str, ...] = ()


@dataclass
class Book:
    """The fake results folder, and the order things happened in."""

    claims: list[tuple[int, int]] = field(default_factory=list)
    lines: list[tuple[int, int, str]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    discarded: list[tuple[int, int]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def log(self, event: str) -> None:
        with self.lock:
            self.events.append(event)


def score(launched: Launched) -> str:
    """The fake scorer, in the decision's order: how the agent ended first, the work last."""
    if launched.ended != "ok":
        return "ERROR"
    return "PASS" if launched.work_done else "FAIL"


class FakeSteps:
    def __init__(self, book: Book, stop: threading.Event) -> None:
        self.book, self.stop = book, stop

    def before(self, job: Job, attempt: int) -> None:
        pass

    def prepare(self, job: Job, attempt: int) -> Sandbox:
        self.book.log(f"prepare {job.rep}")
        return Sandbox(job.rep, attempt)

    def discard(self, prepared: Sandbox) -> None:
        self.book.discarded.append((prepared.rep, prepared.attempt))

    def launch(self, job: Job, prepared: Sandbox) -> Launched:
        with self.book.lock:
            self.book.claims.append((prepared.rep, prepared.attempt))
        self.book.log(f"launch {job.rep}")
        ended = "interrupted" if self.stop.is_set() else job.agent(self.stop)
        return Launched(prepared, ended, work_done=ended in ("ok", "crashed"))

    def must_wait(self, job: Job, launched: Launched) -> bool:
        return job.retries > 0 or launched.ended != "ok"

    def finish(self, job: Job, launched: Launched, attempt: int, retried: list[str]) -> Row | Retry:
        verdict = score(launched)
        with self.book.lock:
            self.book.lines.append((job.rep, attempt, verdict))
            if launched.ended == "outage" and attempt <= job.retries and not self.stop.is_set():
                return Retry("outage")
            row = Row(job.rep, attempt, verdict, tuple(retried))
            self.book.rows.append(row)
        self.book.log(f"record {job.rep}")
        return row


@pytest.fixture(params=["1", "0"], ids=["pipelined", "start-to-row"])
def pipeline(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(PIPELINE_ENV, request.param)
    return str(request.param)


def run(jobs: list[Job], stop: threading.Event | None = None) -> tuple[Book, list[Row]]:
    stop = stop or threading.Event()
    book = Book()
    done = run_in_order(FakeSteps(book, stop), jobs, stop).done
    return book, done


def test_a_crashed_agent_is_an_error_row_recorded_before_the_next_rep_starts(
    pipeline: str,
) -> None:
    book, done = run([Job(1), Job(2, crashes_after_writing), Job(3)])
    assert [(r.rep, r.verdict) for r in done] == [(1, "PASS"), (2, "ERROR"), (3, "PASS")]
    assert done == book.rows
    assert book.events.index("record 2") < book.events.index("launch 3")


def test_an_agent_step_that_raises_stops_the_run_with_no_row_for_it(pipeline: str) -> None:
    def raises(stop: threading.Event) -> str:
        raise OSError("the launcher failed")

    stop = threading.Event()
    book = Book()
    with pytest.raises(OSError):
        run_in_order(FakeSteps(book, stop), [Job(1), Job(2, raises), Job(3)], stop)
    assert [(r.rep, r.verdict) for r in book.rows] == [(1, "PASS")]
    assert (3, 1) not in book.claims, "a rep after the failure was launched"
    assert (2, 1) in book.discarded


def test_an_interrupt_ends_the_rep_in_flight_in_one_row_and_leaves_no_half_row(
    pipeline: str,
) -> None:
    stop, book = threading.Event(), Book()

    def until_stopped(flag: threading.Event) -> str:
        # pipelined, the next rep is prepared while this one runs: the signal comes after
        for _ in range(1000 if pipeline == "1" else 0):
            if "prepare 3" in book.events:
                break
            time.sleep(0.005)
        stop.set()  # the signal arrives while this agent runs
        assert flag.wait(5)
        return "interrupted"

    jobs = [Job(1), Job(2, until_stopped), Job(3), Job(4)]
    done = run_in_order(FakeSteps(book, stop), jobs, stop).done
    assert [(r.rep, r.verdict) for r in done] == [(1, "PASS"), (2, "ERROR")]
    claimed = sorted(book.claims)
    assert claimed == [(1, 1), (2, 1)]
    assert sorted((rep, attempt) for rep, attempt, _ in book.lines) == claimed
    assert sorted((r.rep, r.attempt) for r in book.rows) == claimed
    if pipeline == "1":
        assert (3, 1) in book.discarded, "the rep prepared ahead was not dropped"


def test_an_outage_is_run_again_and_only_the_last_attempt_is_the_row(pipeline: str) -> None:
    tries = iter(["outage", "ok"])

    def outage_once(stop: threading.Event) -> str:
        return next(tries)

    book, done = run([Job(1, outage_once, retries=1), Job(2)])
    assert [(r.rep, r.attempt, r.verdict, r.retried) for r in done] == [
        (1, 2, "PASS", ("outage",)),
        (2, 1, "PASS", ()),
    ]
    assert [(rep, attempt) for rep, attempt, _ in book.lines] == [(1, 1), (1, 2), (2, 1)]


def test_lanes_keep_every_rep_to_one_row() -> None:
    stop = threading.Event()
    book = Book()
    jobs = [Job(n, crashes_after_writing if n % 3 == 0 else done_ok) for n in range(1, 10)]
    done = run_jobs(FakeSteps(book, stop), jobs, 3, stop).done
    verdicts = {r.rep: r.verdict for r in done}
    assert sorted(verdicts) == list(range(1, 10)) and len(done) == 9
    assert all(verdicts[n] == ("ERROR" if n % 3 == 0 else "PASS") for n in verdicts)

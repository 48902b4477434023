"""`evalkit tune`: rounds of proposals decided on the run set, one confirmation on the reserve.

The baseline (the suite's own wording) runs the run set first. Each round hands a proposer
the brief of the incumbent's failing cells and a copy of its wording; a change becomes the
variant `tune-<n>`, which runs the inner loop (the incumbent's failing cells and one
passing control per model and level) and, when no control fell, the whole run set; the
incumbent's run-set rows are reused (same instrument, same CLI). It is accepted by the
superiority and margin tests (`tune/decide.py`). The run set is recorded contaminated when
the first proposal is made; the reserve is never read during the rounds. When a variant was
accepted, the baseline and the best variant run once on the reserve, interleaved, and the
reserve is then recorded contaminated; else it is not run.

Stops: the budget (checked before each grid from its planned reps and the cost per rep
measured so far), `--rounds`, two rounds in a row with no acceptance, an empty proposal
counted as no acceptance, and an accepted wording whose run set is shown worse than the
baseline's (each acceptance is held within the margin of its parent, not of the baseline).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from evalkit.compare.sides import load_side
from evalkit.models import Polarity, ResultRow
from evalkit.records.folder.gridlock import hold_grid_lock
from evalkit.records.folder.results import read_rows
from evalkit.records.folder.workdir import Workdir
from evalkit.run.commands import GridRequest, Quiet, View, run_grid
from evalkit.run.grid import failing_cells as inner_cells
from evalkit.suite.config import Suite, load_suite
from evalkit.suite.lock import contaminate
from evalkit.suite.subject import SUITE_VARIANT, build_subject
from evalkit.tune.brief import digest, write_brief
from evalkit.tune.decide import RoundVerdict, degraded, judge
from evalkit.tune.lineage import (
    LINEAGE,
    PATCH,
    RoundLine,
    add_variant,
    append_line,
    next_number,
    patch,
    write_overlay,
)
from evalkit.tune.page import check_target, write_page
from evalkit.tune.plan import TunePlan, TuneRequest, plan_tune, proposer_of
from evalkit.tune.proposer import Proposal, propose, snapshot
from evalkit.tune.proposer_agent import KEPT, ProposerRun, propose_by_agent
from evalkit.tune.resume import (
    contaminated_by,
    counted,
    round_variant,
    spent_on,
    start_line,
    taken,
)

NO_ACCEPTANCE = 3
"""Exit code when no variant was accepted: the reserve was not run, nothing is confirmed."""


def cost(rows: list[ResultRow]) -> float:
    """What the rows cost, read as a resumed tune reads them (`spent_on`)."""
    return sum(spent_on(rows))


@dataclass
class Budget:
    reps_cap: int | None
    usd_cap: float | None
    reps: int = 0
    usd: float = 0.0

    def add(self, rows: list[ResultRow]) -> None:
        self.reps += len(rows)
        self.usd += cost(rows)

    def refuses(self, planned: int) -> str | None:
        """Why a grid of `planned` reps would pass a cap, or None."""
        if self.reps_cap is not None and self.reps + planned > self.reps_cap:
            return (f"budget: {self.reps} rep(s) spent, the next grid plans {planned}, "
                    f"--budget-reps {self.reps_cap}")  # fmt: skip
        per_rep = self.usd / self.reps if self.reps else 0.0
        if self.usd_cap is not None and self.usd + per_rep * planned > self.usd_cap:
            return (f"budget: ${self.usd:.4f} spent, the next grid plans about "
                    f"${per_rep * planned:.4f}, --budget-usd {self.usd_cap:g}")  # fmt: skip
        return None

    def left_usd(self) -> float | None:
        return None if self.usd_cap is None else max(0.0, self.usd_cap - self.usd)


@dataclass
class Tuned:
    """What a tune came to, for the caller to print and exit with."""

    code: int
    stop: str
    plan: TunePlan
    tune_id: str = ""
    best: str = SUITE_VARIANT
    rounds: list[RoundLine] = field(default_factory=list)
    reserve: RoundVerdict | None = None
    patch: Path | None = None
    page: Path | None = None
    spent_reps: int = 0
    spent_usd: float = 0.0


@dataclass
class _State:
    request: TuneRequest
    suite: Suite
    work: Path
    tune_id: str
    budget: Budget
    view: View
    incumbent: str = SUITE_VARIANT
    incumbent_folder: Path = Path()
    contaminated: bool = False
    misses: int = 0
    rounds: list[RoundLine] = field(default_factory=list)


def tune(request: TuneRequest, view: View | None = None) -> Tuned:
    """The whole tune: plan, baseline, rounds, the reserve's verdict."""
    view = view or Quiet()
    plan = plan_tune(request)
    if request.dry_run:
        return Tuned(0, "dry run: nothing planned or written", plan)
    work = request.workdir.resolve()
    if request.html is not None:
        check_target(request.suite, work, request.html)
    work.mkdir(parents=True, exist_ok=True)
    # one tune a WORKDIR at a time: a second copy would take up the same lineage beside it
    with hold_grid_lock(Workdir(work).grid_lock, f"tune {request.workdir}", what="tune"):
        return _tune_held(request, plan, work, view)


def _tune_held(request: TuneRequest, plan: TunePlan, work: Path, view: View) -> Tuned:
    """The tune itself, under WORKDIR's lock."""
    state = _begin(request, plan, work, view)
    stop = _baseline(state, plan)
    if stop is None:
        stop = _rounds(state, plan)
    done = Tuned(NO_ACCEPTANCE, stop, plan, state.tune_id, state.incumbent, state.rounds)
    if stop.startswith("degraded"):
        done.code = 1  # stop and say so: nothing goes on to the reserve
    elif state.incumbent != SUITE_VARIANT and not stop.startswith("budget"):
        done.reserve = _reserve(state, plan)
        done.code = done.reserve.code if done.reserve is not None else NO_ACCEPTANCE
    done.patch = _write_patch(state)
    if request.html is not None and (work / LINEAGE).is_file():
        done.page = write_page(state.suite, work, request.html)
    done.spent_reps, done.spent_usd = state.budget.reps, state.budget.usd
    append_line(work, {"kind": "stop", "tune": state.tune_id, "reason": stop, "code": done.code})
    return done


def _begin(request: TuneRequest, plan: TunePlan, work: Path, view: View) -> _State:
    """A new tune's state and its start line, or the interrupted one's, taken up again."""
    budget = Budget(request.budget_reps, request.budget_usd)
    before = taken(work, request, plan.paths)
    if before is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        state = _State(request, request.suite, work, f"tune-{stamp}-{secrets.token_hex(2)}",
                       budget, view)  # fmt: skip
        append_line(work, start_line(state.tune_id, request, plan.paths))
        view.say(f"{state.tune_id}: {plan.lines()[-1].removeprefix('tune: ')}")
        return state
    budget.reps, budget.usd = before.spent, before.spent_usd
    state = _State(request, request.suite, work, before.tune_id, budget, view)
    state.rounds = before.rounds
    state.contaminated = contaminated_by(request.suite, before.tune_id, "run")
    for line in before.rounds:
        accepted = line.decision == "accepted" and line.variant
        state.incumbent = line.variant if accepted and line.variant else state.incumbent
        state.misses = 0 if accepted else state.misses + 1
    view.say(f"{state.tune_id}: resumed after {len(before.rounds)} round(s), incumbent "
             f"{state.incumbent}, {before.spent} rep(s) and ${before.spent_usd:.4f} "
             "spent")  # fmt: skip
    return state


def _grid(state: _State, folder: Path, variants: list[str], which: str, planned: int,
          scenarios: list[str] | None = None) -> list[ResultRow] | None:  # fmt: skip
    """One grid of the tune, unless the budget refuses it (None)."""
    results = folder / "results.tsv"
    before = len(read_rows(results)) if results.is_file() else 0
    why = state.budget.refuses(max(0, planned - before))
    if why is not None:
        state.view.say(f"tune: stopped before {folder.name}: {why}")
        return None
    request = state.request
    chosen = [v for v in variants if v != SUITE_VARIANT] or []
    command = f"tune {state.tune_id}: grid --set {which} --reps {request.reps}"
    grid = GridRequest(
        suite=state.suite, models=request.models, workdir=folder, which=which,  # type: ignore[arg-type]
        scenarios=scenarios or [], reps=request.reps, jobs=request.jobs,
        variants=variants if len(variants) > 1 else [], command=command,
        max_cost_usd=state.budget.left_usd(), resume=(folder / "plans.jsonl").is_file(),
        limits=replace(request.limits, variant=chosen[0] if len(variants) == 1 and chosen
                       else None),
    )  # fmt: skip
    ran = run_grid(grid, state.view)
    if ran.stopped:
        raise KeyboardInterrupt
    rows = read_rows(results)
    state.budget.add(rows[before:])
    return rows


def _baseline(state: _State, plan: TunePlan) -> str | None:
    folder = state.work / "baseline"
    state.view.say(f"tune: the baseline wording on the run set, in {folder.name}/")
    rows = _grid(state, folder, [SUITE_VARIANT], "run", plan.baseline_reps)
    if rows is None:
        return "budget: the baseline did not fit"
    state.incumbent_folder = state.work / (
        state.incumbent if state.incumbent != SUITE_VARIANT else "baseline"
    )
    return None


def _failing_polarity(suite: Suite, rows: list[ResultRow]) -> Polarity | None:
    polarity = {s.id: s.scenario.polarity for s in suite.scenarios("run")}
    misses = {"positive": 0, "negative": 0}
    for row in rows:
        if row.verdict == "FAIL" and row.scenario in polarity:  # an ERROR is no wording's
            misses[polarity[row.scenario]] += 1
    if not any(misses.values()):
        return None
    return "positive" if misses["positive"] >= misses["negative"] else "negative"


def _rounds(state: _State, plan: TunePlan) -> str:
    if state.misses >= 2:
        return "two rounds in a row with no acceptance"
    for number in range(len(state.rounds) + 1, state.request.rounds + 1):
        stop = _round(state, plan, number)
        if stop is not None:
            return stop
        if state.misses >= 2:
            return "two rounds in a row with no acceptance"
    return f"--rounds {state.request.rounds} taken"


def _round(state: _State, plan: TunePlan, number: int) -> str | None:
    """One round; a reason to stop, or None to go on."""
    rows = counted(state.incumbent_folder)
    failing = _failing_polarity(state.suite, rows)
    if failing is None:
        return f"nothing fails on the run set under {state.incumbent}"
    brief = write_brief(state.suite, state.incumbent_folder, rows, plan.paths)
    (state.work / "briefs").mkdir(exist_ok=True)
    (state.work / "briefs" / f"round-{number}.md").write_text(brief, encoding="utf-8")
    line = RoundLine(round=number, variant=None, parent=state.incumbent, diff_hash=None,
                     brief_hash=digest(brief), decision="", reason="",
                     tune=state.tune_id)  # fmt: skip
    if not state.contaminated and not contaminated_by(state.suite, state.tune_id, "run"):
        contaminate(state.suite, "run", f"evalkit tune {state.tune_id}: wording proposed "
                    "from the run set's failing cells")  # fmt: skip
        state.contaminated = True
    stop = _propose_and_run(state, plan, number, rows, failing, brief, line)
    state.rounds.append(line)
    append_line(state.work, line)
    state.view.say(f"tune: round {number}: {line.variant or 'no variant'}: {line.decision}: "
                   f"{line.reason}")  # fmt: skip
    if line.decision == "accepted":
        state.incumbent, state.misses = line.variant or state.incumbent, 0
        state.incumbent_folder = state.work / (line.variant or "")
    else:
        state.misses += 1
    return stop


def _propose_and_run(state: _State, plan: TunePlan, number: int, rows: list[ResultRow],
                     failing: Polarity, brief: str, line: RoundLine) -> str | None:  # fmt: skip
    suite = state.suite
    again = round_variant(suite, state.tune_id, number)
    if again is not None:  # the round was interrupted after its proposal: measure it
        base = snapshot(build_subject(suite).root)
        best = snapshot(build_subject(suite, None, again).root)
        line.variant, line.diff_hash = again, digest(patch(base, best))
        return _measure(state, plan, number, rows, failing, line)
    wording = build_subject(suite, None, _variant_arg(state.incumbent))
    proposal = _proposal(state, plan, number, wording.root, brief)
    if proposal is None:
        line.decision, line.reason = "stopped", "budget before the proposer"
        return "budget"
    line.proposer_reps, line.proposer_cost_usd = proposal.reps, proposal.cost_usd
    if proposal.failed:
        line.decision, line.reason = "proposer-failed", proposal.failed
        return f"the proposer failed: {proposal.failed}"
    line.discarded = sorted(proposal.discarded)
    if proposal.discarded:
        state.view.warn(f"tune: round {number}: discarded, outside --paths: "
                        f"{', '.join(line.discarded)}")  # fmt: skip
    if proposal.empty:
        line.decision, line.reason = "empty", "the proposer changed nothing it may change"
        return None
    base = snapshot(build_subject(suite).root)
    after = {**snapshot(wording.root), **proposal.files}
    overlay = {rel: data for rel, data in after.items() if base.get(rel) != data}
    name = f"tune-{next_number(suite)}"
    rel = write_overlay(suite, name, overlay)
    add_variant(suite, name, rel, f"{state.tune_id} round {number}, from {state.incumbent}")
    state.suite = load_suite(suite.root)
    line.variant, line.diff_hash = name, digest(patch(base, {**base, **overlay}))
    return _measure(state, plan, number, rows, failing, line)


def _proposal(state: _State, plan: TunePlan, number: int, root: Path, brief: str
              ) -> Proposal | None:  # fmt: skip
    """What the round's proposer changed: a command's, or an agent's run like a rep, which
    the budget counts (None when the budget refuses it)."""
    request = state.request
    agent = proposer_of(request)
    if agent is None:
        return propose(request.proposer_cmd or "", root, brief, plan.paths, number,
                       unconfined=request.limits.unconfined)  # fmt: skip
    why = state.budget.refuses(1)
    if why is not None:
        state.view.say(f"tune: stopped before round {number}'s proposer: {why}")
        return None
    state.view.say(f"tune: round {number}: {agent.name} proposes")
    limits = request.limits
    run = ProposerRun(agent, state.work / KEPT / f"round-{number}",
                      [state.suite.root, state.work, Path.home()], limits.backend,
                      limits.unconfined, limits.stop)  # fmt: skip
    found = propose_by_agent(run, root, brief, plan.paths, number)
    state.budget.reps += found.reps
    state.budget.usd += found.cost_usd
    append_line(state.work, {"kind": "proposer", "tune": state.tune_id, "round": number,
                             "proposer": agent.name, "reps": found.reps,
                             "cost_usd": found.cost_usd, "failed": found.failed})  # fmt: skip
    return found


def _variant_arg(name: str) -> str | None:
    return None if name == SUITE_VARIANT else name


def _measure(state: _State, plan: TunePlan, number: int, rows: list[ResultRow],
             failing: Polarity, line: RoundLine) -> str | None:  # fmt: skip
    """The inner loop, then the run set, then the decision; a reason to stop, or None."""
    request, suite, name = state.request, state.suite, line.variant or ""
    cells = inner_cells(suite, rows, 1, request.controls)
    chosen = sorted({c.scenario.id for c in cells})
    controls = {c.scenario.id for c in cells} - {r.scenario for r in rows if r.verdict != "PASS"}
    inner = _grid(state, state.work / f"{name}-inner", [name], "run",
                  len(chosen) * len(request.models) * request.reps, chosen)  # fmt: skip
    if inner is None:
        line.decision, line.reason = "stopped", "budget before the inner loop"
        return "budget"
    fell = sorted({r.scenario for r in inner if r.scenario in controls and r.verdict == "FAIL"})
    if fell:
        line.decision = "rejected"
        line.reason = f"control(s) fell in the inner loop: {', '.join(fell)}"
        line.reps = len(inner)
        return None
    whole = _grid(state, state.work / name, [name], "run", plan.baseline_reps)
    line.reps = len(inner) + len(whole or [])
    if whole is None:
        line.decision, line.reason = "stopped", "budget before the run set"
        return "budget"
    a = load_side("A", state.incumbent_folder)
    b = load_side("B", state.work / name)
    verdict = judge(suite, a, b, failing, request.margin, request.min_delta, request.alpha)
    line.delta = verdict.delta
    line.interval = list(verdict.interval) if verdict.interval else None
    line.decision = "accepted" if verdict.accepted else "rejected"
    line.reason = verdict.reason
    line.cost_usd = cost(inner + whole)
    if not verdict.accepted:
        return None
    # each acceptance is within the margin of its parent; the drift from the baseline is not
    worse = degraded(suite, load_side("A", state.work / "baseline"), b, request.alpha)
    if worse is not None:
        line.decision, line.reason = "rejected", f"degraded: {worse}"
        return f"degraded: the run set is worse than the baseline under {name}: {worse}"
    return None


def _reserve(state: _State, plan: TunePlan) -> RoundVerdict | None:
    """The baseline and the best variant, once, interleaved on the reserve; then the reserve
    is recorded contaminated."""
    folder = state.work / "reserve"
    state.view.say(f"tune: {SUITE_VARIANT} and {state.incumbent} on the reserve, interleaved, "
                   f"in {folder.name}/")  # fmt: skip
    rows = _grid(state, folder, [SUITE_VARIANT, state.incumbent], "reserve", plan.reserve_reps)
    if rows is None:
        return None
    base = counted(state.work / "baseline")
    failing = _failing_polarity(state.suite, base) or "positive"
    a = load_side("A", folder, f"variant:{SUITE_VARIANT}")
    b = load_side("B", folder, f"variant:{state.incumbent}")
    request = state.request
    verdict = judge(state.suite, a, b, failing, request.margin, request.min_delta, request.alpha)
    contaminate(state.suite, "reserve", f"evalkit tune {state.tune_id}: the reserve confirmed "
                f"{state.incumbent} against {SUITE_VARIANT} once")  # fmt: skip
    append_line(state.work, {"kind": "reserve", "tune": state.tune_id, "variant":
                             state.incumbent, "code": verdict.code, "reason": verdict.reason,
                             "delta": verdict.delta, "interval": verdict.interval,
                             "reps": len(rows)})  # fmt: skip
    return verdict


def _write_patch(state: _State) -> Path | None:
    if state.incumbent == SUITE_VARIANT:
        return None
    base = snapshot(build_subject(state.suite).root)
    best = snapshot(build_subject(state.suite, None, state.incumbent).root)
    path = state.work / PATCH
    path.write_text(patch(base, best), encoding="utf-8")
    return path

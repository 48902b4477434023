"""The one path from a finished (or stopped) agent run to a verdict.

`run`, `check`, `self-test` and `verify` all call `decide`, so a kept sandbox re-checked
by hand, a fabricated case and a replayed row can never disagree with the row `run` wrote.
The order is fixed; each step that ends the decision names its reason, and every reason
token has this one place it comes from:

1. breach scan: writes into a guarded real-world path, named on every row whatever follows
   (a change there no call explains, on an unconfined rep, is an ERROR:
   `real-vault-changed-unattributed`);
2. a marker the scripted server read in what the world sent the model (`marker:<channel>:
   <word>`: the rep measured an agent that could tell it was measured), then stop: a
   timeout, an interrupt, or a turn cap evalkit held the agent to (`budget:max-turns`, as
   Claude Code's own `--max-turns` ends);
3. the CLI's exit status, with its own error words (an error result line) first when it
   gave any;
4. a hooks' log the agent tampered with (rewritten, or a line that is no hook run) or a
   session's first hook that arrived after the agent's first tool call
   (`tampering:hook-...`); a required hook the agent cannot run
   (`hook-unsupported:AGENT:EVENT`), then one that started and failed; a required hook
   naming its agents applies to their reps alone;
5. trace validity (empty, unparseable, no init, no result line, an error result), then, on
   a scripted rep, the transcript held both ways to what its server served
   (`tampering:<what>`, `tampering/served.py`);
6. a required hook that never fired (a FAIL: only a valid trace can show that);
   steps 4 and 6 do not apply to the no-plugin arm (`without_subject`), whose rows are
   flagged `required-hooks-not-applied` instead;
7. the observed scripts' run log, when the suite observes any: missing or malformed, it
   cannot be trusted; a run no tool call holds, a run whose status is not the one its
   call (the script alone) reported, and a run on the final tree that evalkit's own re-run
   of the script there does not reproduce are ERRORs (`scoring/tampering/reproduced.py`);
8. the suite's checker, under a crash guard, which alone may ask a (paid) judge.

Whatever the verdict, the flags then name what the agent reached outside its rep
(`escapes.py`), the world it could not be given whole, an agent that said it suspects a
test (`markers.py`), and in a suite with neighbours the skills that fired and any misroute
between subject and neighbour (`skills.py`): they never change a verdict.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Literal

from evalkit.models import (
    EVIDENCE_FILES,
    SCHEMA_VERSION,
    Model,
    Reach,
    RequiredHook,
    Rerun,
    Transcript,
    Verdict,
    WorldView,
)
from evalkit.scoring.breaches import breach_reasons
from evalkit.scoring.checker import Checker, CheckInput
from evalkit.scoring.escapes import reach_flags
from evalkit.scoring.fixturefiles import SKIPPED_NAMES
from evalkit.scoring.instrument import Instrument
from evalkit.scoring.judge import Judge
from evalkit.scoring.observed import LogProblem, forged_run, read_runs
from evalkit.scoring.signals import signal_flags
from evalkit.scoring.skills import activation_flags
from evalkit.scoring.tampering.reproduced import status_disagrees, unreproduced
from evalkit.scoring.tampering.served import served_tampering
from evalkit.scoring.transcript import invalid_reason
from evalkit.scoring.treehash import tree_hash
from evalkit.scoring.validity import (
    agent_error,
    error_verdict,
    failed_hooks,
    hook_tampering,
    hooks_for,
    missing_hooks,
    unrunnable_hooks,
)
from evalkit.scoring.world.markers import aware_flags
from evalkit.scoring.world.places import to_rep

CHECKER_ERROR = EVIDENCE_FILES["checker_error"]
HOOKS_NOT_APPLIED = "required-hooks-not-applied"


class ProcessRecord(Model):
    """How the agent process ended, kept as evidence (process.json)."""

    schema_version: int = SCHEMA_VERSION
    exit_code: int | None
    stopped: str | None = None
    timeout: float
    seconds: float = 0.0
    guarded_env: dict[str, str] = {}
    """Where the checker's guarded real-world paths pointed during the run."""
    guard_changes: list[str] = []
    """Guarded paths whose fingerprint changed during the run (see scoring/guard.py)."""
    reach: Reach | None = None
    """What the agent could reach (confined or not); None in records older than it."""
    world: WorldView | None = None
    """Where the rep's folders appeared in the agent's world; None: it ran at their own
    paths (unconfined, or a record older than the world)."""
    markers: list[str] = []
    """`marker:<channel>:<word>` of each word naming the measurement that the scripted
    server read in what the world put in the agent's requests (`scoring/world/leaks.py`)."""
    served: Literal["", "kept"] = ""
    """`kept`: the rep's scripted server kept its record of what it served (served.jsonl,
    held to the transcript by `scoring/tampering/served.py`); empty for a real model, an agent whose
    server keeps none, a fabricated record, or one older than the record."""
    hook_log: list[str] = []
    """What was wrong with the hooks' log evalkit read as it arrived (`hook-log-rewritten`,
    `hook-log-malformed:line-N`, ...), for an agent whose hooks evalkit records."""
    reruns: list[Rerun] | None = None
    """evalkit's own re-runs of the observed scripts on the final tree (`run/rerun.py`);
    None where none was made: a suite that observes none, a fabricated record, or one older
    than re-runs."""
    labels: Literal["", "none", "otlp"] = ""
    """Where the agent's own labels of what fired went: `otlp`, to the rep's receiver (kept
    as telemetry.jsonl, read by `scoring/signals.py`); `none`, it has none or its rep could
    not reach a receiver; empty in a fabricated record or one older than labels."""


def guarded_env_now(checker: Checker) -> dict[str, str]:
    """Where the checker's guarded paths point in this process, for a run with no record."""
    import os

    return {k: os.environ.get(k, "") for k in checker.guarded_env_names()}


def decide(
    instrument: Instrument,
    sandbox: Path,
    transcript: Transcript,
    model: str,
    judge: Judge,
    process: ProcessRecord | None = None,
    evidence: Path | None = None,
    without_subject: bool = False,
    telemetry: str | None = None,
    served: str | None = None,
) -> Verdict:
    """One verdict, in the order above. `instrument` holds all it reads of the suite, its
    fixtures as the agent found them; `process` is None for a sandbox scored by hand or a
    fabricated case; `evidence` is where a checker crash leaves its traceback;
    `without_subject` is the no-plugin arm, which no plugin hook can fire in; `telemetry`
    the CLI's own export, which only ever adds flags; `served` the scripted server's record,
    which the transcript is held to when the process record says one was kept."""
    checker = instrument.checker
    guarded = process.guarded_env if process is not None else guarded_env_now(checker)
    seen = transcript
    if process is not None and process.world is not None:
        roots = dict(zip(checker.guarded_env_names(), checker.guarded_paths(guarded), strict=False))
        transcript = to_rep(transcript, process.world, sandbox, roots)
    inp = CheckInput(instrument, sandbox, transcript, model, judge, without_subject=without_subject)
    changes = process.guard_changes if process is not None else []
    reach = process.reach if process is not None else None
    confined = reach.confined if reach is not None else None
    guard = breach_reasons(inp, checker.guarded_paths(guarded), changes, confined)
    required = [] if without_subject else list(instrument.required_hooks)
    verdict = _before_scoring(inp, process, required, served)
    if verdict is None and guard.errors:
        verdict = error_verdict(inp, guard.errors[0])  # the judge is never asked then
    verdict = verdict or _score(inp, evidence)
    if guard.breaches or guard.errors:
        named = guard.breaches + [e for e in guard.errors if e not in verdict.reasons]
        verdict.reasons = named + verdict.reasons
        if verdict.verdict != "ERROR":
            verdict.verdict = "ERROR" if guard.errors else "FAIL"
    verdict.flags = guard.flags + verdict.flags + reach_flags(reach, seen)
    verdict.flags += world_flags(process) + aware_flags(seen)
    verdict.flags += activation_flags(instrument.skills, instrument.scenario, transcript)
    if process is not None and process.labels:
        verdict.flags += signal_flags(process.labels == "otlp", telemetry, seen)
    if without_subject and instrument.required_hooks:
        verdict.flags.append(HOOKS_NOT_APPLIED)
    return verdict


def world_flags(process: ProcessRecord | None) -> list[str]:
    """`world:none` for a rep that ran at its own paths (unconfined), `world:partial:<what>`
    for a world the backend could not make whole; nothing for a record older than worlds."""
    if process is None or process.reach is None:
        return []
    if process.world is None:  # no world: unconfined, or a backend that cannot remap paths
        if not process.reach.confined:
            return ["world:none"]
        return [f"world:partial:{','.join(process.reach.partial)}"] if process.reach.partial else []
    partial = process.world.partial
    return [f"world:partial:{','.join(partial)}"] if partial else []


def _before_scoring(
    inp: CheckInput,
    process: ProcessRecord | None,
    required: list[RequiredHook],
    served: str | None = None,
) -> Verdict | None:
    transcript = inp.transcript
    if process is not None and process.markers:  # the world gave the measurement away
        verdict = error_verdict(inp, process.markers[0])
        verdict.reasons += process.markers[1:]
        return verdict
    if process is not None and process.stopped == "timeout":
        return error_verdict(inp, f"timeout:{process.timeout:g}s")
    if process is not None and process.stopped == "interrupted":
        return error_verdict(inp, "interrupted")
    if process is not None and process.stopped == "max-turns":
        return error_verdict(inp, "budget:max-turns")
    words = agent_error(transcript)
    if process is not None and process.exit_code not in (0, None):
        # The CLI's own words lead when it gave any (retries and pauses read the first
        # reason); otherwise its exit code does, followed by what the trace lacks.
        exit_reason = f"cli-exit:{process.exit_code}"
        if words is not None:
            verdict = error_verdict(inp, words)
            verdict.reasons.append(exit_reason)
            return verdict
        verdict = error_verdict(inp, exit_reason)
        invalid = invalid_reason(transcript)
        if invalid is not None:
            verdict.reasons.append(invalid)
        return verdict
    if words is not None:
        return error_verdict(inp, words)
    tampered = hook_tampering(transcript, process.hook_log if process is not None else [])
    if tampered is not None:
        return error_verdict(inp, tampered)
    required = hooks_for(transcript, required)
    unrunnable = unrunnable_hooks(transcript, required)
    if unrunnable:
        return error_verdict(inp, unrunnable[0])
    failed = failed_hooks(transcript, required)
    if failed:
        return error_verdict(inp, failed[0])
    invalid = invalid_reason(transcript)
    if invalid is not None:
        return error_verdict(inp, invalid)
    tampered = served_tampering(served, transcript) if process and process.served else None
    if tampered is not None:
        return error_verdict(inp, tampered)
    missing = missing_hooks(transcript, required)
    if missing:
        verdict = error_verdict(inp, missing[0])
        verdict.axis_a, verdict.axis_b, verdict.verdict = "A:FAIL", "B:FAIL", "FAIL"
        verdict.reasons = missing
        return verdict
    return _observed(inp, process)


def _observed(inp: CheckInput, process: ProcessRecord | None) -> Verdict | None:
    """The observed scripts' runs read into `inp`, or the ERROR that makes them no evidence:
    a log that cannot be trusted, a run no tool call holds, a status its own call denies, an
    outcome evalkit's re-run on the final tree does not reproduce. A record from a run
    (one that names its reach) holds re-runs; one without them is missing them."""
    observe = inp.instrument.observe
    if not observe:
        return None
    try:
        inp.observed = read_runs(inp.sandbox, list(observe))
    except LogProblem as problem:
        return error_verdict(inp, str(problem))
    calls = inp.transcript.tool_calls
    agent = inp.transcript.agent
    reason = forged_run(inp.observed, calls) or status_disagrees(inp.observed, calls, agent)
    if reason is None and process is not None and process.reach is not None:
        final = tree_hash(str(inp.sandbox / "project"), SKIPPED_NAMES)
        reason = unreproduced(inp.observed, final, process.reruns or [])
    return error_verdict(inp, reason) if reason is not None else None


def _score(inp: CheckInput, evidence: Path | None) -> Verdict:
    try:
        return inp.instrument.checker.check(inp)
    except Exception as exc:  # a checker bug must cost the row its score, never the row
        if evidence is not None and evidence.is_dir():
            (evidence / CHECKER_ERROR).write_text(traceback.format_exc(), encoding="utf-8")
        return error_verdict(inp, f"checker-crashed:{type(exc).__name__}")

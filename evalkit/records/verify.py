"""`evalkit verify`: re-derive every recorded row from the evidence kept beside it.

For each manifest line the sandbox is rebuilt from the pinned fixture plus the kept
diffs, in a fresh folder that is its own git top level; the kept transcript is
re-scored with the kept judge answer replayed; and the verdict is held against
check.json and the TSV row. Then rows, manifest lines and plans are counted.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.models import EvidenceLine, JudgeRecord, Plan, ResultRow, Verdict
from evalkit.records.evidence import bundle_id, replay_folder
from evalkit.records.results import format_row, read_rows, row_from_verdict
from evalkit.run.environ import patched_env
from evalkit.run.runner import load_plans, read_manifest
from evalkit.scoring.decide import ProcessRecord, decide
from evalkit.scoring.hashing import sha256_file
from evalkit.scoring.judge import ReplayJudge
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite

FROZEN_KEYS = (
    "fixture_hashes",
    "rubric_sha256",
    "plugin_hashes",
    "checker",
    "checker_source",
    "cli_version",
)


@dataclass
class Trial:
    name: str
    problems: list[str] = field(default_factory=list)
    verdict: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyReport:
    trials: list[Trial] = field(default_factory=list)
    count_problems: list[str] = field(default_factory=list)
    publish_problems: list[str] = field(default_factory=list)

    @property
    def all_rederived(self) -> bool:
        return all(t.ok for t in self.trials) and not self.count_problems

    @property
    def publishable(self) -> bool:
        return self.all_rederived and bool(self.trials) and not self.publish_problems


def _key(run_id: str, scenario: str, model: str, rep: int) -> tuple[str, str, str, int]:
    return (run_id, scenario, model, rep)


def _trial_name(line: EvidenceLine) -> str:
    name = f"{line.run_id} {line.scenario} {line.model} rep-{line.rep}"
    if line.attempt > 1 or line.superseded_by is not None:
        name += f" attempt-{line.attempt}"
    if line.superseded_by is not None:
        name += f" (superseded by attempt-{line.superseded_by}: {line.retry_reason})"
    return name


def final_lines(lines: list[EvidenceLine]) -> list[EvidenceLine]:
    """The attempt of each rep that counts: the one no later attempt superseded."""
    return [x for x in lines if x.superseded_by is None]


def _rows(
    workdir: Path, lines: list[EvidenceLine]
) -> dict[tuple[str, str, str, int], list[ResultRow]]:
    files = {workdir / (line.results or "results.tsv") for line in lines}
    files.add(workdir / "results.tsv")
    run_ids = {line.run_id for line in lines}
    found: dict[tuple[str, str, str, int], list[ResultRow]] = {}
    for path in sorted(files):
        for row in read_rows(path):
            if row.run_id in run_ids:
                found.setdefault(_key(row.run_id, row.scenario, row.model, row.rep), []).append(row)
    return found


def _same(a: Verdict, b: Verdict) -> list[str]:
    diffs = []
    for name in ("verdict", "axis_a", "axis_b", "reasons", "flags"):
        if getattr(a, name) != getattr(b, name):
            diffs.append(f"{name} {getattr(b, name)!r} re-derived as {getattr(a, name)!r}")
    return diffs


def verify_trial(suite: Suite, workdir: Path, line: EvidenceLine, rows: list[ResultRow]) -> Trial:
    trial = _rederive(suite, workdir, line, rows)
    trial.problems += _edited(line, workdir / line.evidence)
    return trial


def _rederive(suite: Suite, workdir: Path, line: EvidenceLine, rows: list[ResultRow]) -> Trial:
    trial = Trial(_trial_name(line), verdict=line.verdict)
    folder = workdir / line.evidence
    for role, rel in sorted(line.files.items()):
        if not (folder / rel).is_file():
            trial.problems.append(f"missing-evidence:{role}")
    if trial.problems:
        return trial
    current = suite.fixture_hashes()
    for name, kept in sorted(line.declarations.get("fixture_hashes", {}).items()):
        if current.get(name) != kept:
            trial.problems.append(f"fixture-drift:{name}")
    if bundle_id(line.declarations) != line.bundle_id:
        trial.problems.append("bundle-id-does-not-match-declarations")
    try:
        scenario = suite.resolve(line.scenario)
    except EvalkitError:
        trial.problems.append("scenario-gone")
        return trial
    if scenario.sha256 != line.declarations.get("scenario_sha256"):
        trial.problems.append("scenario-drift")
    if trial.problems:
        return trial
    kept = Verdict.model_validate_json((folder / line.files["check"]).read_text())
    judge_file = line.files.get("judge")
    record = (
        JudgeRecord.model_validate_json((folder / judge_file).read_text()) if judge_file else None
    )
    process = ProcessRecord.model_validate_json((folder / line.files["process"]).read_text())
    with tempfile.TemporaryDirectory(prefix="evalkit-replay-") as tmp:
        sandbox = Path(tmp) / "sandbox"
        sandbox.mkdir()
        try:
            for name, fixture in suite.fixture_dirs().items():
                diff = (folder / line.files[f"{name}_diff"]).read_bytes()
                replay_folder(fixture, diff, sandbox / name)
        except (RuntimeError, KeyError) as exc:
            trial.problems.append(f"diff-does-not-apply:{str(exc).splitlines()[0][:120]}")
            return trial
        transcript = read_transcript(folder / line.files["transcript"])
        with patched_env({k: v for k, v in process.guarded_env.items() if v}):
            again = decide(
                suite, scenario, sandbox, transcript, line.model, ReplayJudge(record), process
            )
    trial.problems += [f"check.json {d}" for d in _same(again, kept)]
    if again.verdict != line.verdict:
        trial.problems.append(f"manifest verdict {line.verdict} re-derived as {again.verdict}")
    if line.superseded_by is not None:
        return trial
    if not rows:
        trial.problems.append("no TSV row")
    elif len(rows) > 1:
        trial.problems.append(f"{len(rows)} TSV rows")
    else:
        row = rows[0]
        fresh = row_from_verdict(again, bundle_id=line.bundle_id, attempt=line.attempt)
        decided = ("a", "b", "verdict", "reasons", "flags", "bundle_id", "attempt")
        wanted = row.model_copy(update={k: getattr(fresh, k) for k in decided})
        if format_row(row) != format_row(wanted):
            trial.problems.append(
                f"TSV row says {row.verdict} {row.a} {row.b} {row.reasons!r} {row.bundle_id}; "
                f"re-derived {fresh.verdict} {fresh.a} {fresh.b} {fresh.reasons!r}"
            )
    return trial


def _edited(line: EvidenceLine, folder: Path) -> list[str]:
    """Kept files whose bytes changed since the run, even where the verdict would not."""
    return [
        f"evidence-edited:{role}"
        for role, kept_hash in sorted(line.file_hashes.items())
        if role in line.files
        and (folder / line.files[role]).is_file()
        and sha256_file(folder / line.files[role]) != kept_hash
    ]


def verify_workdir(suite: Suite, workdir: Path) -> VerifyReport:
    lines, manifest_problems = read_manifest(workdir)
    rows = _rows(workdir, lines)
    report = VerifyReport(count_problems=manifest_problems)
    for line in lines:
        report.trials.append(
            verify_trial(
                suite,
                workdir,
                line,
                rows.get(_key(line.run_id, line.scenario, line.model, line.rep), []),
            )
        )
    _count(report, workdir, lines, rows)
    _publishability(report, final_lines(lines), workdir)
    return report


def _count(
    report: VerifyReport,
    workdir: Path,
    lines: list[EvidenceLine],
    rows: dict[tuple[str, str, str, int], list[ResultRow]],
) -> None:
    attempts = {(x.run_id, x.scenario, x.model, x.rep, x.attempt) for x in lines}
    for x in lines:
        if x.superseded_by is not None and (*_key(x.run_id, x.scenario, x.model, x.rep),
                                            x.superseded_by) not in attempts:  # fmt: skip
            report.count_problems.append(
                f"{_trial_name(x)}: attempt-{x.superseded_by} has no manifest line"
            )
    lines = final_lines(lines)
    in_manifest = Counter(_key(x.run_id, x.scenario, x.model, x.rep) for x in lines)
    for key, n in sorted(in_manifest.items()):
        if n > 1:
            report.count_problems.append(f"{n} manifest lines for {' '.join(map(str, key))}")
    for key in sorted(set(rows) - set(in_manifest)):
        report.count_problems.append(f"TSV row without evidence: {' '.join(map(str, key))}")
    plans = load_plans(workdir)
    planned = planned_reps(plans)
    for cell_key, (_, n) in skipped_reps(plans, lines).items():
        planned[cell_key] -= n
    have = Counter((x.run_id, x.scenario, x.model) for x in lines)
    for cell in sorted(set(planned) | set(have)):
        if planned[cell] != have[cell]:
            report.count_problems.append(
                f"plan {' '.join(cell)}: {planned[cell]} rep(s) planned, {have[cell]} recorded"
            )
    n_rows = sum(len(v) for v in rows.values())
    if not (n_rows == len(lines) == sum(planned.values())):
        report.count_problems.append(
            f"counts differ: {n_rows} TSV row(s), {len(lines)} manifest line(s), "
            f"{sum(planned.values())} planned rep(s)"
        )


def planned_reps(plans: list[Plan]) -> Counter[tuple[str, str, str]]:
    """Reps each (run id, scenario, model) set out to run."""
    planned: Counter[tuple[str, str, str]] = Counter()
    for plan in plans:
        for cell in plan.cells:
            planned[(plan.run_id, cell.scenario, cell.model)] += cell.reps
    return planned


def skipped_reps(
    plans: list[Plan], lines: list[EvidenceLine]
) -> dict[tuple[str, str, str], tuple[str, int]]:
    """Planned reps a run gave up on, per (run id, scenario, model): why and how many, less
    any a later resume recorded."""
    planned = planned_reps(plans)
    have = Counter((x.run_id, x.scenario, x.model) for x in final_lines(lines))
    skipped: dict[tuple[str, str, str], tuple[str, int]] = {}
    for plan in plans:
        for cell in plan.skipped:
            key = (plan.run_id, cell.scenario, cell.model)
            before = skipped.get(key, ("", 0))[1]
            still = min(before + cell.reps, max(0, planned[key] - have[key]))
            if still:
                skipped[key] = (plan.skip_reason, still)
    return skipped


def _publishability(report: VerifyReport, lines: list[EvidenceLine], workdir: Path) -> None:
    problems = report.publish_problems
    if not lines:
        problems.append("nothing recorded")
    by_reason: Counter[str] = Counter()
    for why, n in skipped_reps(load_plans(workdir), lines).values():
        by_reason[why] += n
    problems += [f"{n} planned rep(s) {why}" for why, n in sorted(by_reason.items())]
    if not report.all_rederived:
        problems.append("not every row re-derives from its evidence")
    errors = sum(1 for x in lines if x.verdict == "ERROR")
    if errors:
        problems.append(f"{errors} ERROR row(s)")
    unfrozen = sum(1 for x in lines if x.declarations.get("lock") != "frozen")
    if unfrozen:
        problems.append(
            f"{unfrozen} row(s) were run without a frozen suite (no evalkit.lock, or past a "
            "drift with --allow-unfrozen)"
        )
    frozen = {
        json.dumps({k: x.declarations.get(k) for k in FROZEN_KEYS}, sort_keys=True) for x in lines
    }
    if len(frozen) > 1:
        problems.append(f"rows were run against {len(frozen)} different sets of frozen hashes")
    per_scenario: dict[str, set[str]] = {}
    for x in lines:
        per_scenario.setdefault(x.scenario, set()).add(str(x.declarations.get("scenario_sha256")))
    drifted = sorted(s for s, hashes in per_scenario.items() if len(hashes) > 1)
    if drifted:
        problems.append(f"scenario files changed between rows: {', '.join(drifted)}")

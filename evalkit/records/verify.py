"""`evalkit verify`: re-derive every recorded row from the evidence kept beside it.

For each manifest line the sandbox is rebuilt from the pinned fixture plus the kept
diffs, in a replay folder that is its own git top level; the kept transcript is
re-scored with the kept judge answer replayed; and the verdict is held against
check.json and the TSV row. Then rows, manifest lines and plans are counted. Nothing
of one rep's re-derivation is reused for another but what no rep's evidence can change:
the fixtures, the kept subject, and the folders reset between reps.
"""

from __future__ import annotations

import json
import queue
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from evalkit.errors import EvalkitError, NotFoundError
from evalkit.forked import forked_map
from evalkit.models import EvidenceLine, GuardRecord, JudgeRecord, Plan, ResultRow, Verdict
from evalkit.records.calibration import NOT_A_MEASUREMENT, Calibration, read_calibration
from evalkit.records.confined import OutsideFolderError, confined, escapes
from evalkit.records.evidence import bundle_id, replay_folder, replay_log
from evalkit.records.folderimage import FolderImage
from evalkit.records.gitutil import GitError
from evalkit.records.keep import CHECK
from evalkit.records.results import format_row, read_results, row_from_verdict
from evalkit.records.row_judge import judge_counts, judges_line
from evalkit.records.workdir import CellCount, RepKey, Workdir, evidence_key, grid_gaps, tally
from evalkit.scoring.decide import ProcessRecord, decide
from evalkit.scoring.hashing import sha256_bytes
from evalkit.scoring.judge import ReplayJudge
from evalkit.scoring.transcript import parse_transcript
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import (
    NO_SUBJECT_VARIANT,
    SUBJECTS,
    fixture_subject_paths,
    kept_subject,
    subject_baselines,
)

SCORING_KEY = "checker_source"
"""The declaration naming the hash of the code that scored a rep."""
FROZEN_KEYS = (
    "fixture_hashes",
    "rubric_sha256",
    "rubrics_sha256",
    "checker",
    "checker_source",
    "cli_version",
)


def mixed_instruments(lines: list[EvidenceLine], planned: set[str] | None = None) -> list[str]:
    """Rows run against more than one frozen instrument. The CLI version is held per agent:
    each agent's CLI has its own, so a grid of several agents is one instrument when each
    agent ran one version, or only versions the plans asked for by name (`planned`)."""
    others = [k for k in FROZEN_KEYS if k != "cli_version"]
    frozen = {json.dumps({k: x.declarations.get(k) for k in others}, sort_keys=True) for x in lines}
    versions: dict[str, set[str]] = {}
    for x in lines:
        agent = str(x.declarations.get("agent") or "claude")
        versions.setdefault(agent, set()).add(str(x.declarations.get("cli_version")))
    mixed = [v for v in versions.values() if len(v) > 1 and not v <= (planned or set())]
    sets = len(frozen) * max((len(v) for v in mixed), default=1)
    if sets > 1:
        return [f"rows were run against {sets} different sets of frozen hashes"]
    return []


UNBACKED = "row without evidence"
TAMPERED = "tampered"
"""A trial whose manifest line names a path outside the folder: never read, never replayed."""
REPLAYS_AT_ONCE = 3
"""Trials replayed at once, each in a worker process: a worker waits on git part of the
time, so there is one more than the two cores this was measured on."""


@dataclass
class Trial:
    name: str
    problems: list[str] = field(default_factory=list)
    verdict: str = ""
    older_code: bool = False
    """Scored by scoring code other than the current one: its records are held to each other,
    not re-derived; `evalkit rescore` scores it again beside the old row."""
    rescored: bool = False
    """A later re-score replaced this rep's row (the old row stays in the file)."""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class VerifyReport:
    trials: list[Trial] = field(default_factory=list)
    count_problems: list[str] = field(default_factory=list)
    publish_problems: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    """file:line of each plan, manifest or results line that did not read, skipped"""
    grid_gaps: list[str] = field(default_factory=list)
    """why a sharded grid the folder holds is not whole (missing shards, a shard twice)"""
    calibration: Calibration | None = None
    """set for a calibration folder, which is held to its expected verdicts, not published"""

    @property
    def all_rederived(self) -> bool:
        return all(t.ok for t in self.trials) and not self.count_problems and not self.unreadable

    @property
    def publishable(self) -> bool:
        return self.all_rederived and bool(self.trials) and not self.publish_problems

    @property
    def failed_trials(self) -> int:
        return sum(1 for t in self.trials if not t.ok)


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


def rescored_keys(lines: list[EvidenceLine]) -> set[RepKey]:
    """Reps whose row a later `evalkit rescore` replaced (their rows stay in the file)."""
    return {(x.rescore_of, x.scenario, x.model, x.rep) for x in lines if x.rescore_of}


@dataclass
class _Rows:
    """Every row of every results file the folder names, by rep, with where it was read."""

    by_key: dict[RepKey, list[ResultRow]] = field(default_factory=dict)
    where: dict[RepKey, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.by_key.values())


def _rows(records: Workdir, files: list[Path]) -> _Rows:
    found = _Rows()
    for path in files:
        read = read_results(path)
        found.problems += [
            f"{records.relative(path.parent)}/{p}".lstrip("./") for p in read.problems
        ]
        where = records.relative(path)
        for number, row in read.rows:
            key = (row.run_id, row.scenario, row.model, row.rep)
            found.by_key.setdefault(key, []).append(row)
            found.where.setdefault(key, []).append(f"{where}:{number}")
    return found


def _same(a: Verdict, b: Verdict) -> list[str]:
    diffs = []
    for name in ("verdict", "axis_a", "axis_b", "reasons", "flags"):
        if getattr(a, name) != getattr(b, name):
            diffs.append(f"{name} {getattr(b, name)!r} re-derived as {getattr(a, name)!r}")
    return diffs


def verify_trial(
    suite: Suite,
    workdir: Path,
    line: EvidenceLine,
    rows: list[ResultRow],
    current: str | None = None,
    baselines: Baselines | None = None,
) -> Trial:
    """One trial, whatever its evidence holds: a file that does not read, or a git failure
    while rebuilding its sandbox, is a problem of this trial and the next one is verified.
    Each kept file is read once: the bytes held to its recorded hash are the bytes parsed
    and replayed."""
    outside = escapes(workdir, line)
    if outside:
        trial = Trial(_trial_name(line), verdict=line.verdict)
        trial.problems += [f"{TAMPERED}:{p}" for p in outside]
        return trial
    files = read_evidence(workdir, line)
    try:
        trial = _rederive(suite, workdir, line, rows, files, current, baselines)
    except (ValidationError, ValueError, UnicodeDecodeError, OSError, EvalkitError) as exc:
        trial = Trial(_trial_name(line), verdict=line.verdict)
        trial.problems.append(f"could-not-rederive:{str(exc).splitlines()[0][:160]}")
    trial.problems += _edited(line, files)
    return trial


def read_evidence(workdir: Path, line: EvidenceLine) -> dict[str, bytes]:
    """Each kept file of the trial by role, for those that are there, inside the folder, and
    read (the others are missing evidence)."""
    found = {}
    for role, rel in line.files.items():
        try:
            path = confined(workdir, line.evidence, rel)
            if path.is_file():
                found[role] = path.read_bytes()
        except (OSError, OutsideFolderError):
            continue
    return found


@dataclass
class Kept:
    """What a trial's evidence holds, read: the scenario, the kept JSON files parsed, and
    every kept file's bytes by role."""

    scenario: ScenarioFile
    verdict: Verdict
    judge: JudgeRecord | None
    process: ProcessRecord
    files: dict[str, bytes]


def read_kept(
    suite: Suite,
    workdir: Path,
    line: EvidenceLine,
    trial: Trial,
    files: dict[str, bytes] | None = None,
) -> Kept | None:
    """The trial's evidence (from `files`, its kept files read already, when given), or None
    with each reason it cannot be used named on the trial."""
    if files is None:
        files = read_evidence(workdir, line)
    for role in sorted(line.files):
        if role not in files:
            trial.problems.append(f"missing-evidence:{role}")
    if trial.problems:
        return None
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
        return None
    if scenario.sha256 != line.declarations.get("scenario_sha256"):
        trial.problems.append("scenario-drift")
    verdict = judge = process = None
    try:
        verdict = Verdict.model_validate_json(files["check"])
    except (ValidationError, ValueError, KeyError):
        trial.problems.append("unreadable-evidence:check")
    try:
        judge = JudgeRecord.model_validate_json(files["judge"]) if "judge" in files else None
    except (ValidationError, ValueError):
        trial.problems.append("unreadable-evidence:judge")
    try:
        process = ProcessRecord.model_validate_json(files["process"])
    except (ValidationError, ValueError, KeyError):
        trial.problems.append("unreadable-evidence:process")
    if process is not None and "guard" in files:
        try:
            guard = GuardRecord.model_validate_json(files["guard"])
            process.guard_changes = guard.changes()
        except (ValidationError, ValueError):
            trial.problems.append("unreadable-evidence:guard")
    if trial.problems or verdict is None or process is None:
        return None
    return Kept(scenario, verdict, judge, process, files)


class Baselines:
    """Each diff baseline read once per command and laid out from memory for every rep:
    the fixtures are hashed once per command too, so every rep is held to the same files.
    Each replay runs in a folder of its own; the folder of a finished replay is reset for
    the next (only what the kept diff changed is written again), not deleted and rebuilt."""

    def __init__(self) -> None:
        self._read: dict[Path, FolderImage] = {}
        self._subjects: dict[str, dict[str, Path]] = {}
        self._lock = threading.Lock()
        self._free: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._root = Path(tempfile.mkdtemp(prefix="evalkit-replay-"))
        """every replay folder, made by this process or a worker forked from it"""

    def ready(self, suite: Suite, workdir: Path, lines: Iterable[EvidenceLine]) -> None:
        """Read every baseline the lines name now, so that workers forked afterwards start
        with them (a subject one fails to lay out is that rep's problem, named there)."""
        suite.fixture_hashes()
        for name in suite.fixture_dirs():
            suite.fixture_files(name)
        for line in lines:
            try:
                fixtures = self.of(suite, workdir, line)
            except EvalkitError:
                continue
            for fixture in fixtures.values():
                self.image(fixture)

    def of(self, suite: Suite, workdir: Path, line: EvidenceLine) -> dict[str, Path]:
        """The diff baselines a rep was recorded against: each fixture with the subject it
        ran with applied, from the copy kept in WORKDIR/subjects/ (the bare fixture when the
        subject has nothing inside the fixtures), laid out once per subject per command."""
        subject_hash = str(line.declarations.get("subject_hash") or "")
        with self._lock:
            if subject_hash not in self._subjects:
                inside = bool(subject_hash) and bool(fixture_subject_paths(suite))
                self._subjects[subject_hash] = (
                    subject_baselines(suite, _kept_subject(workdir, subject_hash))
                    if inside
                    else suite.fixture_dirs()
                )
            return dict(self._subjects[subject_hash])

    def image(self, folder: Path) -> FolderImage:
        with self._lock:
            if folder not in self._read:
                self._read[folder] = FolderImage.read(folder)
            return self._read[folder]

    @contextmanager
    def sandbox(self, names: Iterable[str]) -> Iterator[Path]:
        """A folder to replay one rep in, holding nothing but what an earlier replay left
        under `names` (replay_folder resets those); a replay that raised leaves its folder
        behind for deletion, never for the next rep."""
        try:
            lane = self._free.get_nowait()
        except queue.Empty:
            lane = Path(tempfile.mkdtemp(prefix="lane-", dir=self._root))
        sandbox = lane / "sandbox"
        sandbox.mkdir(exist_ok=True)
        wanted = set(names)
        for stray in [p for p in sandbox.iterdir() if p.name not in wanted]:
            if stray.is_dir() and not stray.is_symlink():
                shutil.rmtree(stray)
            else:
                stray.unlink()
        yield sandbox
        self._free.put(lane)

    def close(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)


def _kept_subject(workdir: Path, subject_hash: str) -> Path:
    """The kept subject a declaration names, only from inside the folder."""
    confined(workdir, SUBJECTS, subject_hash.removeprefix("sha256:")[:16])
    return kept_subject(workdir, subject_hash)


def replay_decide(
    suite: Suite,
    workdir: Path,
    line: EvidenceLine,
    kept: Kept,
    baselines: Baselines | None = None,
) -> Verdict:
    """The verdict the current scoring code gives the kept evidence: the sandbox rebuilt from
    the pinned fixture and the kept diffs, the kept transcript, the kept judge answer. Raises
    GitError or KeyError when a diff does not apply."""
    if baselines is None:
        own = Baselines()
        try:
            return replay_decide(suite, workdir, line, kept, own)
        finally:
            own.close()
    fixtures = baselines.of(suite, workdir, line)
    with baselines.sandbox(fixtures) as sandbox:
        for name, fixture in fixtures.items():
            replay_folder(baselines.image(fixture), kept.files[f"{name}_diff"], sandbox / name)
        replay_log(kept.files.get("observed"), sandbox)
        transcript = parse_transcript(kept.files["transcript"])
        return decide(
            suite.instrument(kept.scenario, fixtures),
            sandbox,
            transcript,
            line.model,
            ReplayJudge(kept.judge),
            kept.process,
            without_subject=line.declarations.get("variant") == NO_SUBJECT_VARIANT,
        )


def scoring_hash(suite: Suite) -> str:
    """The hash of the code that scores, as each rep's declarations name it."""
    return suite.checker.source_hash()


def scored_by_older_code(line: EvidenceLine, current: str) -> bool:
    return line.declarations.get(SCORING_KEY) != current


def _rederive(
    suite: Suite,
    workdir: Path,
    line: EvidenceLine,
    rows: list[ResultRow],
    files: dict[str, bytes],
    current: str | None = None,
    baselines: Baselines | None = None,
) -> Trial:
    trial = Trial(_trial_name(line), verdict=line.verdict)
    kept = read_kept(suite, workdir, line, trial, files)
    if kept is None or trial.problems:
        return trial
    if scored_by_older_code(line, current or scoring_hash(suite)):
        # Re-scoring with other code may rightly differ: hold the records to each other
        # (check.json, manifest, row) instead; the evidence's own hashes catch an edit.
        trial.older_code = True
        again = kept.verdict
    else:
        try:
            again = replay_decide(suite, workdir, line, kept, baselines)
        except NotFoundError as exc:
            trial.problems.append(f"subject-not-kept:{str(exc).splitlines()[0][:120]}")
            return trial
        except (GitError, KeyError) as exc:
            trial.problems.append(f"diff-does-not-apply:{str(exc).splitlines()[0][:120]}")
            return trial
    trial.problems += [f"{CHECK} {d}" for d in _same(again, kept.verdict)]
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


def _edited(line: EvidenceLine, files: dict[str, bytes]) -> list[str]:
    """Kept files whose bytes changed since the run, even where the verdict would not."""
    return [
        f"evidence-edited:{role}"
        for role, kept_hash in sorted(line.file_hashes.items())
        if role in line.files and role in files and sha256_bytes(files[role]) != kept_hash
    ]


def verify_workdir(suite: Suite, workdir: Path) -> VerifyReport:
    records = Workdir(workdir)
    index = records.read_evidence_index()
    plans = records.read_plans()
    lines = index.items
    rows = _rows(records, records.results_files(plans.items, lines))
    report = VerifyReport(unreadable=plans.problems + index.problems + rows.problems)
    current = scoring_hash(suite)
    replaced = rescored_keys(lines)
    baselines = Baselines()

    def one(line: EvidenceLine) -> Trial:
        found = rows.by_key.get(evidence_key(line), [])
        trial = verify_trial(suite, workdir, line, found, current, baselines)
        trial.rescored = evidence_key(line) in replaced
        return trial

    try:
        baselines.ready(suite, workdir, lines)
        report.trials = forked_map(one, lines, REPLAYS_AT_ONCE)
    finally:
        baselines.close()
    counts = _count(report, lines, rows, plans.items)
    counted = [x for x in final_lines(lines) if evidence_key(x) not in replaced]
    _publishability(report, counted, counts, planned_versions(plans.items))
    older = sum(1 for t in report.trials if t.older_code and not t.rescored)
    if older:
        report.publish_problems.append(
            f"{older} row(s) scored-by-older-code: `evalkit rescore {workdir}` scores them "
            "again with the current code, beside the old rows"
        )
    _calibration(report, plans.items, rows, lines, replaced)
    return report


def _calibration(
    report: VerifyReport, plans: list[Plan], rows: _Rows, lines: list[EvidenceLine],
    replaced: set[RepKey],
) -> None:  # fmt: skip
    """A calibration folder is never publishable: it is held to its expected verdicts."""
    counted = [r for key, found in rows.by_key.items() if key not in replaced for r in found]
    report.calibration = read_calibration(plans, counted, (x.model for x in lines))
    if report.calibration is not None:
        report.publish_problems = [NOT_A_MEASUREMENT]


def _count(
    report: VerifyReport, lines: list[EvidenceLine], rows: _Rows, plans: list[Plan]
) -> list[CellCount]:
    attempts = {(*evidence_key(x), x.attempt) for x in lines}
    for x in lines:
        if x.superseded_by is not None and (*evidence_key(x), x.superseded_by) not in attempts:
            report.count_problems.append(
                f"{_trial_name(x)}: attempt-{x.superseded_by} has no manifest line"
            )
    lines = final_lines(lines)
    in_manifest = Counter(evidence_key(x) for x in lines)
    for key, n in sorted(in_manifest.items()):
        if n > 1:
            report.count_problems.append(f"{n} manifest lines for {' '.join(map(str, key))}")
    for key in sorted(set(rows.by_key) - set(in_manifest)):
        named = " ".join(map(str, key)) if key[0] else " ".join(map(str, key[1:])) + " (no run id)"
        for where in rows.where[key]:
            report.count_problems.append(f"{where}: {UNBACKED}: {named}")
    counts = tally(plans, in_manifest.elements())
    for cell in counts:
        if not cell.complete:
            report.count_problems.append(f"plan {cell.describe()}")
    report.grid_gaps = grid_gaps(plans)
    report.count_problems += report.grid_gaps
    expected = sum(c.expected for c in counts)
    if not (rows.count == len(lines) == expected):
        report.count_problems.append(
            f"counts differ: {rows.count} TSV row(s), {len(lines)} manifest line(s), "
            f"{expected} planned rep(s)"
        )
    return counts


def planned_versions(plans: list[Plan]) -> set[str]:
    """The CLI versions the plans asked for by name (`--cli`)."""
    return {c.cli for p in plans for c in p.cells if c.cli}


def _publishability(
    report: VerifyReport,
    lines: list[EvidenceLine],
    counts: list[CellCount],
    versions: set[str] | None = None,
) -> None:
    """`versions`: CLI versions asked for by name; rows that all ran one of them differ in
    version by design (a version grid or a bisect), so the version is then no drift."""
    problems = report.publish_problems
    if not lines:
        problems.append("nothing recorded")
    by_reason: Counter[str] = Counter()
    for cell in counts:
        if cell.skipped:
            by_reason[cell.skip_reason] += cell.skipped
    problems += [f"{n} planned rep(s) {why}" for why, n in sorted(by_reason.items())]
    problems += [
        f"{TAMPERED}: {t.name}: {p.removeprefix(TAMPERED + ':')}"
        for t in report.trials
        for p in t.problems
        if p.startswith(TAMPERED + ":")
    ]
    if report.failed_trials:
        problems.append(f"{report.failed_trials} trial(s) do not re-derive from their evidence")
    unbacked = [p for p in report.count_problems if f": {UNBACKED}: " in p]
    if unbacked:
        problems.append(f"{len(unbacked)} row(s) without evidence")
    if report.unreadable:
        problems.append(f"{len(report.unreadable)} line(s) that do not read")
    problems += report.grid_gaps
    other = [p for p in report.count_problems if p not in unbacked + report.grid_gaps]
    if other:
        problems.append(
            f"{len(other)} count problem(s): planned reps, manifest lines and rows disagree"
        )
    errors = sum(1 for x in lines if x.verdict == "ERROR")
    if errors:
        problems.append(f"{errors} ERROR row(s)")
    unconfined = [x for x in lines if x.declarations.get("confinement") == "none"]
    if unconfined:
        named = ", ".join(_trial_name(x) for x in unconfined[:5])
        more = f" and {len(unconfined) - 5} more" if len(unconfined) > 5 else ""
        problems.append(
            f"{len(unconfined)} row(s) ran unconfined, without their OS sandbox: {named}{more}"
        )
    unfrozen = sum(1 for x in lines if x.declarations.get("lock") != "frozen")
    if unfrozen:
        problems.append(
            f"{unfrozen} row(s) were run without a frozen suite (no evalkit.lock, or past a "
            "drift with --allow-unfrozen)"
        )
    problems += mixed_instruments(lines, versions)
    judges = judge_counts(x.declarations for x in lines)
    if len(judges) > 1:
        problems.append(
            f"rows were judged by {len(judges)} judge identities ({judges_line(judges)}): a "
            "judge is a factor; split the folder by run id"
        )
    per_scenario: dict[str, set[str]] = {}
    for x in lines:
        per_scenario.setdefault(x.scenario, set()).add(str(x.declarations.get("scenario_sha256")))
    drifted = sorted(s for s, hashes in per_scenario.items() if len(hashes) > 1)
    if drifted:
        problems.append(f"scenario files changed between rows: {', '.join(drifted)}")

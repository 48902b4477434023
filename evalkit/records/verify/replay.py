"""Replaying one recorded rep: its kept files read once and held to their hashes, its sandbox
rebuilt from the pinned fixture (the subject applied) and the kept diffs, and the verdict the
current scoring code gives it held against check.json, the manifest and the TSV row.
"""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from evalkit.errors import EvalkitError, NotFoundError
from evalkit.models import EvidenceLine, GuardRecord, JudgeRecord, ResultRow, Verdict
from evalkit.records.folder.confined import OutsideFolderError, confined, escapes
from evalkit.records.folder.keep import CHECK
from evalkit.records.folder.results import format_row, row_from_verdict
from evalkit.records.kept.evidence import bundle_id, replay_folder, replay_log
from evalkit.records.kept.folderimage import FolderImage
from evalkit.records.kept.gitutil import GitError
from evalkit.records.verify.capabilities import capability_problems
from evalkit.records.verify.result import TAMPERED, Trial, trial_name
from evalkit.scoring.decide import ProcessRecord, decide
from evalkit.scoring.hashing import sha256_bytes
from evalkit.scoring.judge import ReplayJudge
from evalkit.scoring.transcript import parse_transcript
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import (
    SUBJECTS,
    WITHOUT_SUBJECT,
    fixture_subject_paths,
    kept_subject,
    subject_baselines,
)

SCORING_KEY = "checker_source"
"""The declaration naming the hash of the code that scored a rep."""


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
    baselines: ReplayBaselines | None = None,
) -> Trial:
    """One trial, whatever its evidence holds: a file that does not read, or a git failure
    while rebuilding its sandbox, is a problem of this trial and the next one is verified.
    Each kept file is read once: the bytes held to its recorded hash are the bytes parsed
    and replayed."""
    outside = escapes(workdir, line)
    if outside:
        trial = Trial(trial_name(line), verdict=line.verdict)
        trial.problems += [f"{TAMPERED}:{p}" for p in outside]
        return trial
    files = read_evidence(workdir, line)
    try:
        trial = _rederive(suite, workdir, line, rows, files, current, baselines)
    except (ValidationError, ValueError, UnicodeDecodeError, OSError, EvalkitError) as exc:
        trial = Trial(trial_name(line), verdict=line.verdict)
        trial.problems.append(f"could-not-rederive:{str(exc).splitlines()[0][:160]}")
    trial.problems += edited_files(line, files)
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
    tools = scenario.scenario.launch.tools
    trial.problems += capability_problems(line.declarations, tools, process)
    if trial.problems or verdict is None or process is None:
        return None
    return Kept(scenario, verdict, judge, process, files)


class ReplayBaselines:
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
    baselines: ReplayBaselines | None = None,
) -> Verdict:
    """The verdict the current scoring code gives the kept evidence: the sandbox rebuilt from
    the pinned fixture and the kept diffs, the kept transcript, the kept judge answer. Raises
    GitError or KeyError when a diff does not apply."""
    if baselines is None:
        own = ReplayBaselines()
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
            without_subject=line.declarations.get("variant") == WITHOUT_SUBJECT,
            telemetry=_kept_text(kept.files.get("telemetry")),
            served=_kept_text(kept.files.get("served")),
        )


def _kept_text(data: bytes | None) -> str | None:
    return data.decode("utf-8", errors="replace") if data is not None else None


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
    baselines: ReplayBaselines | None = None,
) -> Trial:
    trial = Trial(trial_name(line), verdict=line.verdict)
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


def edited_files(line: EvidenceLine, files: dict[str, bytes]) -> list[str]:
    """Kept files whose bytes changed since the run, even where the verdict would not."""
    return [
        f"evidence-edited:{role}"
        for role, kept_hash in sorted(line.file_hashes.items())
        if role in line.files and role in files and sha256_bytes(files[role]) != kept_hash
    ]

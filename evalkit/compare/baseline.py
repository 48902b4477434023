"""The suite's baseline: the verified results folder `compare` takes as A when given only B.

It is recorded in the lock beside the frozen hashes (never enforced), named by what the folder
held then: one variant's rows, their subject hashes, models, bundle ids and count, and the
folder's verification key (its records, evidence listing and scoring code, by hash). A folder
that moved, lost or gained rows, now holds other configurations, or whose records changed
since (even when they verify again) is named as such, never silently compared.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from evalkit.compare.sides import Side, load_side
from evalkit.errors import ConfigError, NotFoundError, RefusedError
from evalkit.records.folder.workdir import Workdir
from evalkit.records.verify.record import read_verification, verify_and_record
from evalkit.suite.config import Suite
from evalkit.suite.lock import Baseline, read_lock, record_baseline

RECORD_HINT = "record one with `evalkit suite baseline WORKDIR`"
REPLACE_HINT = "record another with `evalkit suite baseline WORKDIR --replace`"


def shown_path(suite: Suite, folder: Path) -> str:
    """Relative to the suite when the folder lies inside it, else resolved: a path relative
    to where `baseline` was typed would mean another folder wherever `compare` is typed."""
    folder = folder.resolve()
    try:
        return folder.relative_to(suite.root.resolve()).as_posix()
    except ValueError:
        return str(folder)


def baseline_folder(suite: Suite, baseline: Baseline) -> Path:
    path = Path(baseline.workdir)
    return path if path.is_absolute() else suite.root / path


def choose_baseline(suite: Suite, workdir: Path, variant: str | None = None) -> Baseline:
    """The baseline WORKDIR would be, refused unless it holds this suite's reps only and
    verifies PUBLISHABLE. A folder of several variants needs `variant` to name one: a
    baseline is one wording."""
    folder = workdir.resolve()
    if not folder.is_dir():
        raise NotFoundError(f"{workdir}: no such results folder")
    suites = Workdir(folder).recorded_suites()
    if suites != {suite.name}:
        held = f"reps of suite {', '.join(sorted(suites))}" if suites else "no recorded reps"
        raise RefusedError(f"{workdir}: holds {held}, not of suite {suite.name}")
    verified = verify_and_record(suite, folder)
    if not verified.publishable:
        why = "; ".join(verified.publish_problems) or "it does not verify"
        raise RefusedError(f"{workdir}: not PUBLISHABLE ({why}); see `evalkit verify {workdir}`")
    side = load_side("A", folder)
    variants = sorted({side.variant(r) for r in side.rows})
    if variant is None:
        if len(variants) > 1:
            raise RefusedError(
                f"{workdir}: holds variants {', '.join(variants)}; a baseline is one of them, "
                "chosen with --variant NAME"
            )
        variant = variants[0]
    elif variant not in variants:
        raise NotFoundError(
            f"{workdir}: no rows of variant {variant} (it holds {', '.join(variants)})"
        )
    rows = [r for r in side.rows if side.variant(r) == variant]
    wordings = sorted({side.subject_hash(r) for r in rows})
    if len(wordings) > 1:
        raise RefusedError(
            f"{workdir}: variant {variant} ran under {len(wordings)} wordings "
            f"({', '.join(w[:19] for w in wordings)}); a baseline is one: record a folder "
            "that holds one"
        )
    records = Workdir(folder)
    now = read_verification(
        suite, records, records.read_plans().items, records.read_evidence_index().items
    )
    if now.state != "fresh" or now.record is None:
        raise RefusedError(f"{workdir}: its records changed while it was verified; try again")
    return Baseline(
        workdir=shown_path(suite, folder),
        variant=variant,
        subject_hashes=wordings,
        models=sorted({r.model for r in rows}),
        bundle_ids=sorted({r.bundle_id for r in rows}),
        rows=len(rows),
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        key=now.record.key,
    )


def described(baseline: Baseline) -> str:
    return f"baseline {baseline.workdir} (variant {baseline.variant}, recorded {baseline.date})"


def set_baseline(
    suite: Suite, workdir: Path, variant: str | None = None, replace: bool = False
) -> Baseline:
    """Choose WORKDIR as the baseline and record it. A recorded baseline is replaced only when
    asked: it is what every later `compare B` is measured against."""
    lock = read_lock(suite)
    recorded = lock.baseline if lock is not None else None
    if recorded is not None and not replace:
        raise RefusedError(
            f"{described(recorded)} is already recorded; pass --replace to record {workdir} instead"
        )
    chosen = choose_baseline(suite, workdir, variant)
    record_baseline(suite, chosen)
    return chosen


def baseline_side(suite: Suite) -> Side:
    """Side A from the recorded baseline: its variant's rows, checked against what was
    recorded (the folder, its bundle ids, its row count)."""
    lock = read_lock(suite)
    baseline = lock.baseline if lock is not None else None
    if baseline is None:
        raise ConfigError(
            f"compare: no baseline recorded for suite {suite.name}; {RECORD_HINT}, or give "
            "two results folders"
        )
    named = f"baseline {baseline.workdir} (recorded {baseline.date})"
    folder = baseline_folder(suite, baseline).resolve()
    if not folder.is_dir():
        raise NotFoundError(f"{named}: the folder no longer exists; {REPLACE_HINT}")
    try:
        side = load_side("A", folder, f"variant:{baseline.variant}")
    except NotFoundError:
        raise NotFoundError(
            f"{named}: holds no rows of variant {baseline.variant} any more; {REPLACE_HINT}"
        ) from None
    now = sorted({r.bundle_id for r in side.rows})
    changes = []
    if gone := sorted(set(baseline.bundle_ids) - set(now)):
        changes.append(f"bundle ids gone: {', '.join(gone)}")
    if new := sorted(set(now) - set(baseline.bundle_ids)):
        changes.append(f"bundle ids not in the baseline: {', '.join(new)}")
    if len(side.rows) != baseline.rows:
        changes.append(f"{baseline.rows} row(s) recorded, {len(side.rows)} now")
    if changes:
        raise RefusedError(
            f"{named}: no longer holds what was recorded ({'; '.join(changes)}); verify it "
            f"and {REPLACE_HINT}"
        )
    _check_verified(suite, baseline, folder, named)
    side.baseline = True
    return side


def _check_verified(suite: Suite, baseline: Baseline, folder: Path, named: str) -> None:
    """The folder verifies PUBLISHABLE now, by a record of the same key as when recorded. A
    row flipped by hand leaves the record stale; evidence edited and verified again moves the
    key. An evidence edit that keeps each file's size and time shows only to `verify`."""
    again = f"`evalkit suite baseline {folder} --replace` records it as it is now"
    if not baseline.key:
        raise RefusedError(f"{named}: recorded without its verification key; {again}")
    records = Workdir(folder)
    now = read_verification(
        suite, records, records.read_plans().items, records.read_evidence_index().items
    )
    problems = now.problems(folder)
    if problems or now.record is None:
        raise RefusedError(f"{named}: not PUBLISHABLE now ({'; '.join(problems)})")
    key = now.record.key
    changed = sorted(k for k in set(key) | set(baseline.key) if key.get(k) != baseline.key.get(k))
    if changed:
        raise RefusedError(
            f"{named}: its records changed since it was recorded ({', '.join(changed)}); "
            f"if that is meant, {again}"
        )

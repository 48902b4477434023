"""evalkit.lock: the frozen state of a suite, which set wording was tuned against, and the
baseline results folder `compare` measures against.

Frozen: the instrument, that is the fixtures (their subject files aside), the plugins that
are not the subject, the neighbours, both scenario sets, the rubric, ``evalkit.yaml``
itself (checker options, required hooks, the judge; its ``variants`` and ``agents`` aside)
and the code that scores, found by location (see ``evalkit.scoring.hashing``). The subject
(the wording under test) is never frozen. Once frozen, a run refuses to start when any of
the instrument changed, naming what changed. A rep run without a lock, or past a drift with
--allow-unfrozen, says so in its declarations and is never publishable. Recording
contamination moves the measurement to the other set (for every variant, or for the one
whose wording was tuned).
Contamination and the baseline are kept beside the frozen hashes, outside what is enforced.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from evalkit.errors import ConfigError, RefusedError
from evalkit.models import SCHEMA_VERSION, Model
from evalkit.scoring.hashing import sha256_bytes, sha256_file, tree_hash
from evalkit.suite.config import SET_FOLDERS, Suite
from evalkit.suite.markers import refuse_markers
from evalkit.suite.subject import SUITE_VARIANT, subject_entries
from evalkit.suite.template_tasks import refuse_placeholders
from evalkit.suite.yamlio import dump, quick_load_file

LOCK_NAME = "evalkit.lock"
SetName = Literal["run", "reserve"]


class Contamination(Model):
    model_config = {"extra": "forbid"}
    date: str
    note: str
    variant: str | None = Field(
        None, description="the variant whose wording was tuned; none: every variant's"
    )


class Baseline(Model):
    """The results folder `compare` takes as A by default: verified PUBLISHABLE when recorded,
    and named by what it held then, so a later change to it is noticed."""

    model_config = {"extra": "forbid"}
    workdir: str = Field(description="relative to the suite when inside it, else resolved")
    variant: str
    subject_hashes: list[str]
    models: list[str]
    bundle_ids: list[str]
    rows: int
    date: str
    key: dict[str, str] = Field(
        default_factory=dict,
        description="the folder's verification key when recorded (records, evidence listing, "
        "scoring code by hash); compare requires the same key, verified PUBLISHABLE",
    )


class Lock(Model):
    """The enforced part is `checker` and `hashes` (see `drift`); contamination records and
    the baseline are kept beside them and never make a run refuse."""

    model_config = {"extra": "forbid"}
    schema_version: int = SCHEMA_VERSION
    checker: str
    hashes: dict[str, str]
    contaminated: dict[str, list[Contamination]] = Field(default_factory=dict)
    baseline: Baseline | None = None


def neighbour_hashes(suite: Suite) -> dict[str, str]:
    """Each neighbour's folder name -> its tree hash: frozen in the lock, and declared by
    every rep so that `compare` and `gate` can tell a side among neighbours from one alone."""
    return {path.name: tree_hash(path) for path in suite.neighbours}


def current_hashes(suite: Suite) -> dict[str, str]:
    """The instrument's hashes. The subject (the wording under test) is left out: it is meant
    to change between grids and is recorded on every row instead."""
    hashes: dict[str, str] = {}
    for name, digest in suite.fixture_hashes().items():
        if "/" not in name:
            hashes[f"fixture:{name}"] = digest
    hashes.update(suite.built_hashes())
    subject = [(suite.root / rel).resolve() for rel in subject_entries(suite)]
    for path in suite.plugin_dirs():
        if not any(path == s or s in path.parents for s in subject):
            hashes[f"plugin:{path.name}"] = tree_hash(path)
    hashes.update({f"neighbour:{name}": h for name, h in neighbour_hashes(suite).items()})
    for which, folder in SET_FOLDERS.items():
        hashes[f"scenarios:{which}"] = tree_hash(suite.root / folder)
    hashes["config"] = config_hash(suite)
    hashes["world"] = world_hash(suite)
    if suite.config.mcp_mocks is not None:
        hashes["mcp-mocks"] = "sha256:" + sha256_file(suite.root / suite.config.mcp_mocks)
    hashes["scoring-code"] = suite.checker.source_hash()
    rubric = suite.rubric_path
    if rubric.is_file():
        hashes["rubric"] = "sha256:" + sha256_file(rubric)
    for name in suite.config.judge.rubrics:
        hashes[f"rubric:{name}"] = "sha256:" + sha256_file(suite.rubric_file(name))
    return hashes


def config_hash(suite: Suite) -> str:
    """evalkit.yaml as instrument: what the file sets, parsed, less its ``variants`` (subject,
    not instrument), so adding, editing or removing a wording variant never drifts the lock,
    and less its ``agents`` pins (the CLI version is a factor every row records, and a pin
    bumped by `watch --bump` must not unfreeze the suite it was measured on).
    ``subject:`` stays in: it draws the line between what is frozen and what is not.
    Comments and layout are not the instrument either, so they never drift it."""
    data = suite.config.model_dump(mode="json", exclude={"variants", "agents"}, exclude_unset=True)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + sha256_bytes(canonical)


def world_hash(suite: Suite) -> str:
    """The world the agent finds itself in, defaults included: a change to evalkit's default
    world moves every suite that relies on it, as an edit to its own `world:` would."""
    data = suite.config.world.model_dump(mode="json")
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + sha256_bytes(canonical)


def lock_path(suite: Suite) -> Path:
    """Beside the suite's config; a plugin's eval folder keeps it in that folder."""
    from evalkit.suite.plugin_evals import instrument_home

    return (instrument_home(suite.root) or suite.root) / LOCK_NAME


def _own_lock(suite: Suite) -> None:
    """In a plugin's eval folder the lock is refused as a link or anything but a file, before
    it is read or written: the plugin ships that folder."""
    from evalkit.suite.plugin_evals import instrument_home, own_path

    home = instrument_home(suite.root)
    if home is not None:
        own_path(home, LOCK_NAME)


def read_lock(suite: Suite) -> Lock | None:
    _own_lock(suite)
    path = lock_path(suite)
    return quick_load_file(Lock, path) if path.is_file() else None


def _write(suite: Suite, lock: Lock) -> None:
    header = (
        "# Written by `evalkit suite freeze`, `suite contaminate` and `suite baseline`; "
        "do not edit by hand.\n"
    )
    _own_lock(suite)
    lock_path(suite).write_text(header + dump(lock.model_dump(exclude_none=True)), encoding="utf-8")


def _checker_id(suite: Suite) -> str:
    return f"{suite.checker.name}@{suite.checker.version}"


def freeze(suite: Suite) -> Lock:
    """Write the lock from the files as they are now, keeping any contamination records.
    Every scenario of both sets is loaded first, so a suite that does not load is never
    frozen, nor one still holding a placeholder Task from `evalkit init`."""
    refuse_placeholders(suite.scenarios("all"), "freezing the suite")
    refuse_markers(suite)
    old = read_lock(suite)
    lock = Lock(
        checker=_checker_id(suite),
        hashes=current_hashes(suite),
        contaminated=old.contaminated if old else {},
        baseline=old.baseline if old else None,
    )
    _write(suite, lock)
    return lock


def drift(suite: Suite, lock: Lock) -> list[str]:
    now = current_hashes(suite)
    changed = [k for k in sorted(set(now) | set(lock.hashes)) if now.get(k) != lock.hashes.get(k)]
    if lock.checker != _checker_id(suite):
        changed.append(f"checker ({lock.checker} -> {_checker_id(suite)})")
    return changed


LockState = Literal["frozen", "no-lock", "drifted"]


def lock_state(suite: Suite) -> LockState:
    """Whether a rep run now runs against the frozen instrument: recorded with every rep."""
    lock = read_lock(suite)
    if lock is None:
        return "no-lock"
    return "drifted" if drift(suite, lock) else "frozen"


def ensure_frozen(suite: Suite, allow_unfrozen: bool = False) -> None:
    """Refuse a run against a drifted suite unless allowed. A suite without a lock runs,
    but every rep it records is declared unfrozen (see ``lock_state``)."""
    lock = read_lock(suite)
    if lock is None or allow_unfrozen:
        return
    changed = drift(suite, lock)
    suite.lock_state = "drifted" if changed else "frozen"  # what every rep declares
    if changed:
        raise RefusedError(
            f"{lock_path(suite)}: these no longer match the lock: {', '.join(changed)}; "
            "run `evalkit suite freeze` if the change is deliberate, or pass --allow-unfrozen"
        )


def _existing(suite: Suite) -> Lock:
    lock = read_lock(suite)
    if lock is None:
        raise ConfigError(f"{lock_path(suite)}: no lock yet; run `evalkit suite freeze` first")
    return lock


def contaminate(suite: Suite, which: SetName, note: str, variant: str | None = None) -> Lock:
    """Label a set training-set: for every variant, or for one variant's rows only (the set
    that variant's wording was tuned against)."""
    lock = _existing(suite)
    if not note.strip():
        raise ConfigError("contaminate: --note must say what was tuned and why")
    if variant is not None and variant not in {SUITE_VARIANT, *suite.config.variants}:
        known = ", ".join([SUITE_VARIANT, *sorted(suite.config.variants)])
        raise ConfigError(
            f"contaminate: --variant {variant}: not a variant in {suite.config_path} ({known})"
        )
    entry = Contamination(
        date=datetime.now(UTC).isoformat(timespec="seconds"), note=note, variant=variant
    )
    lock.contaminated.setdefault(which, []).append(entry)
    _write(suite, lock)
    return lock


def record_baseline(suite: Suite, baseline: Baseline | None) -> Lock:
    """Set (or, with None, clear) the baseline. It sits beside the enforced hashes, so
    recording one never makes a run refuse."""
    lock = _existing(suite)
    lock.baseline = baseline
    _write(suite, lock)
    return lock


def set_label(lock: Lock | None, which: str, variant: str | None = None) -> str:
    """'training-set' once wording was tuned against the set, for every variant or for
    `variant`; else 'measurement', or 'held' for a reserve no run set was tuned against."""

    def tuned(name: str) -> bool:
        entries = lock.contaminated.get(name, []) if lock is not None else []
        return any(e.variant is None or e.variant == variant for e in entries)

    if tuned(which):
        return "training-set"
    if which == "reserve" and not tuned("run"):
        return "held"
    return "measurement"


def folder_label(lock: Lock | None, which: str, variants: Iterable[str]) -> str:
    """A set's label for rows of several variants: the label they all share, else the label
    of the suite at large, then each variant whose own label differs from it."""
    labels = {v: set_label(lock, which, v) for v in sorted(set(variants))}
    if len(set(labels.values())) == 1:
        return next(iter(labels.values()))
    common = set_label(lock, which)
    apart = [f"{label} for variant {v}" for v, label in labels.items() if label != common]
    return "; ".join([common, *apart])

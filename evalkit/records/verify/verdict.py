"""Whether a folder is publishable: what its trials and counts found, and what its rows declare
(one frozen instrument, one judge, confined, frozen, no ERROR).
"""

from __future__ import annotations

import json
from collections import Counter

from evalkit.models import EvidenceLine, Plan
from evalkit.records.folder.workdir import CellCount, RepKey
from evalkit.records.rows.judge import judge_counts, judges_line
from evalkit.records.verify.calibration import NOT_A_MEASUREMENT, read_calibration
from evalkit.records.verify.counts import (
    RowsByRep,
    counted_rows,
)
from evalkit.records.verify.result import TAMPERED, UNBACKED, VerifyReport, trial_name

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


def calibration_verdict(
    report: VerifyReport, plans: list[Plan], rows: RowsByRep, lines: list[EvidenceLine],
    replaced: set[RepKey],
) -> None:  # fmt: skip
    """A calibration folder is never publishable: it is held to its expected verdicts."""
    every = [r for found in rows.by_key.values() for r in found]
    counted = [r for r in counted_rows(every, lines) if (r.run_id, r.scenario, r.model, r.rep)
               not in replaced]  # fmt: skip
    report.calibration = read_calibration(plans, counted, (x.model for x in lines))
    if report.calibration is not None:
        report.publish_problems = [NOT_A_MEASUREMENT]


def planned_versions(plans: list[Plan]) -> set[str]:
    """The CLI versions the plans asked for by name (`--cli`)."""
    return {c.cli for p in plans for c in p.cells if c.cli}


def judge_publishability(
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
    problems += declared_problems(lines, versions)


def unproven(lines: list[EvidenceLine]) -> list[str]:
    """Rows of a backend that only the machine running it can prove (srt on macOS) whose
    invocation's preflight did not see `policy:escape` hold there: flagged as unconfined
    rows are."""
    bare = [x for x in lines if x.declarations.get("escape_proof", "held") != "held"]
    if not bare:
        return []
    named = ", ".join(trial_name(x) for x in bare[:5])
    more = f" and {len(bare) - 5} more" if len(bare) > 5 else ""
    return [
        f"{len(bare)} row(s) ran where the escape canaries were not proven on that machine "
        f"(the preflight's policy:escape did not hold, or did not run): {named}{more}"
    ]


def declared_problems(lines: list[EvidenceLine], versions: set[str] | None = None) -> list[str]:
    """What the counted rows themselves declare against publishing: ERROR rows, rows run
    unconfined or unfrozen, several instruments or judges, scenario files that changed."""
    problems: list[str] = []
    errors = sum(1 for x in lines if x.verdict == "ERROR")
    if errors:
        problems.append(f"{errors} ERROR row(s)")
    unconfined = [x for x in lines if x.declarations.get("confinement") == "none"]
    if unconfined:
        named = ", ".join(trial_name(x) for x in unconfined[:5])
        more = f" and {len(unconfined) - 5} more" if len(unconfined) > 5 else ""
        problems.append(
            f"{len(unconfined)} row(s) ran unconfined, without their OS sandbox: {named}{more}"
        )
    problems += unproven(lines)
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
    return problems

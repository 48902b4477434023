"""The factors a report splits its rates by beyond model and polarity: the subject (variant and
wording hash), the agent, the CLI version and the judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.models import (
    ResultRow,
)
from evalkit.records.folder.manifest import ManifestFacts
from evalkit.records.report.model import (
    Activation,
    Cell,
    ExpectedCheck,
    ModelSummary,
    Report,
)
from evalkit.records.rows.agent import DEFAULT_AGENT
from evalkit.records.rows.subject import UNKNOWN, short_hash
from evalkit.records.rows.versions import semver_key


def bundle_declarations(lines: Iterable[ManifestFacts]) -> dict[str, dict[str, Any]]:
    """Each bundle id's declarations: where an older row's variant and subject are kept."""
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        found.setdefault(line.bundle_id, line.declarations)
    return found


SUBJECT_COLUMNS = ("variant", "subject")


def cli_versions_of(rows: list[ResultRow]) -> list[str]:
    """The CLI versions the rows ran with, in semver order (unparseable ones last)."""
    return sorted({r.cli_version for r in rows if r.cli_version}, key=version_order)


def version_order(version: str) -> tuple[int, Any]:
    try:
        return (0, semver_key(version))
    except EvalkitError:
        return (1, version)


def split_by_subject(report: Report) -> bool:
    """Several subjects: every table names each row's, since their rates are apart."""
    return len(report.subjects) > 1


def subject_cells(report: Report, variant: str, subject_hash: str) -> tuple[str, ...]:
    return (variant, short_hash(subject_hash)) if split_by_subject(report) else ()


def split_factors(report: Report) -> list[tuple[str, str]]:
    """(column, field) of each factor the rows hold several of: agent, confinement backend,
    CLI version, judge."""
    found = []
    if len(report.agents) > 1:
        found.append(("agent", "agent"))
    if len(report.backends) > 1:
        found.append(("backend", "backend"))
    if len(report.cli_versions) > 1:
        found.append(("cli", "cli_version"))
    if len(report.judges) > 1:
        found.append(("judge", "judge"))
    return found


def factor_cells(
    report: Report, record: Cell | ModelSummary | ExpectedCheck | Activation
) -> tuple[str, ...]:
    """A row's agent, CLI version and judge, each where the report is split by it."""
    return tuple(str(getattr(record, name)) or "-" for _, name in split_factors(report))


def with_subject(report: Report, columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns, with variant and subject after the model when the report is split by
    subject, and the agent, CLI version and judge where rows hold several of one."""
    subject = SUBJECT_COLUMNS if split_by_subject(report) else ()
    factors = tuple(column for column, _ in split_factors(report))
    return (columns[0], *subject, *factors, *columns[1:])


def subject_lines(report: Report) -> list[str]:
    """Which wording the rows ran with: one line for one subject, one per subject for more,
    and a warning for a variant whose wording changed between runs."""
    if len(report.subjects) == 1:
        [one] = report.subjects
        return [f"subject: {one.variant} {one.subject_hash or UNKNOWN}"]
    out = [
        f"SUBJECTS: {len(report.subjects)} - every rate below is of one variant and subject "
        "hash; none is pooled across them"
    ]
    out += [f"  {x.variant} {x.subject_hash or UNKNOWN}: {x.rows} row(s)" for x in report.subjects]
    hashes = Counter(x.variant for x in report.subjects)
    out += [
        f"variant {v} ran with {n} subject hashes (its wording changed between runs); "
        "each is tabled apart"
        for v, n in hashes.items()
        if n > 1
    ]
    return out


def judge_line(report: Report) -> str:
    """Which judges decided the rows; several are a factor every rate below is split by."""
    named = ", ".join(f"{judge} {n} row(s)" for judge, n in report.judges.items())
    if len(report.judges) > 1:
        return (
            f"JUDGES: {len(report.judges)} ({named}): each rate below is of one judge, none "
            "pooled; the folder is not publishable until it is split by run id"
        )
    return f"judged by: {named}"


def backend_line(report: Report) -> str:
    """Which confinement backends ran the rows, when more than one did: every rate below is
    of one backend."""
    if len(report.backends) < 2:
        return ""
    named = ", ".join(f"{name} {n} row(s)" for name, n in report.backends.items())
    return f"BACKENDS: {len(report.backends)} ({named}): each rate below is of one backend"


def agent_line(report: Report) -> str:
    """Which agents ran the rows; empty for Claude Code's alone, the agent a report assumes."""
    named = ", ".join(f"{agent} {n} row(s)" for agent, n in report.agents.items())
    if len(report.agents) > 1:
        return f"AGENTS: {len(report.agents)} ({named}): each rate below is of one agent"
    if list(report.agents) in ([], [DEFAULT_AGENT]):
        return ""
    return f"agent: {named}"

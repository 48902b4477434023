"""The results TSV: one row per rep, appended safely by many processes at once.

Each append takes an exclusive lock and writes the whole row in a single write
call, so parallel shell loops neither tear nor drop rows. The first six columns
are the ones the autoresearch loops read.

Rows are read by header name, so a file written by an older evalkit still reads:
a column it lacks reads as the default `ResultRow` states for it. Appending to such
a file writes the row in the file's own columns, as long as every column it lacks
may be absent (`MAY_BE_ABSENT`); a file lacking a column that tells measurements
apart is refused, with a pointer to `evalkit results migrate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from evalkit.errors import ConfigError
from evalkit.models import ResultRow, Verdict
from evalkit.records.folder.appendlog import append_locked, check_appendable
from evalkit.records.folder.regular import check_record

COLUMNS = list(ResultRow.model_fields)
HEADER = "\t".join(COLUMNS) + "\n"
CORE = COLUMNS[:6]
"""The columns every evalkit results file has had, first, in this order."""
REQUIRED = [name for name, f in ResultRow.model_fields.items() if f.is_required()]
MAY_BE_ABSENT = frozenset(
    {
        "flags",
        "time",
        "evalkit_version",
        "cli_version",
        "model_id",
        "turns",
        "duration_ms",
        "cost_usd_estimate",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "schema_version",
        "variant",
        "subject_hash",
    }
)
"""Columns an older file may lack and still be appended to: what they hold describes a rep but
never tells two measurements apart. Any other column (rep, run_id, bundle_id, attempt, and new
columns such as a variant or a subject hash) must be in the file before a row is appended to
it; `evalkit results migrate` adds them."""
RENAMED = {"cost_usd": "cost_usd_estimate"}
"""Old column name -> the current one: read under the new name, renamed by migrate."""


def absent_defaults() -> dict[str, object]:
    """What each column reads as in a file that lacks it."""
    return {name: f.default for name, f in ResultRow.model_fields.items() if not f.is_required()}


def _clean(value: object) -> str:
    return " ".join(str(value).replace("\t", " ").split())


DECLARED_FLAGS = ("world:",)
"""Flags that declare the rep's environment (what its world could not hide), the same on
every rep of a backend: kept in the flags column, out of the reasons column, which says
what the agent did and why the row came out as it did."""


def row_from_verdict(verdict: Verdict, **extra: object) -> ResultRow:
    told = [f for f in verdict.flags if not f.startswith(DECLARED_FLAGS)]
    reasons = ";".join(verdict.reasons + told) or "-"
    flags = ";".join(verdict.flags) or "-"
    return ResultRow(
        scenario=verdict.scenario,
        model=verdict.model,
        a=verdict.axis_a,
        b=verdict.axis_b,
        verdict=verdict.verdict,
        reasons=reasons,
        flags=flags,
        **extra,
    )


def format_row(row: ResultRow, columns: list[str] | None = None) -> str:
    return "\t".join(_clean(getattr(row, c)) for c in columns or COLUMNS) + "\n"


def migrate_hint(path: Path) -> str:
    return f"`evalkit results migrate {path.parent}` rewrites it with the current columns"


def header_problem(path: Path, header: list[str]) -> str | None:
    """Why rows cannot be appended under this header, or None when they can."""
    if header[: len(CORE)] != CORE:
        return (
            f"{path}: not an evalkit results file (its first line is not evalkit's header); "
            "refusing to append to it"
        )
    renamed = [f"{c} (now {RENAMED[c]})" for c in header if c in RENAMED]
    unknown = [c for c in header if c not in COLUMNS and c not in RENAMED]
    lacking = [c for c in COLUMNS if c not in header and c not in MAY_BE_ABSENT]
    parts = [
        f"lacks {', '.join(lacking)}" if lacking else "",
        f"has old column names {', '.join(renamed)}" if renamed else "",
        f"has unknown {', '.join(unknown)}" if unknown else "",
    ]
    if any(parts):
        what = "; ".join(p for p in parts if p)
        return f"{path}: written by another evalkit version ({what}); {migrate_hint(path)}"
    return None


def _first_line(path: Path) -> str:
    with path.open("rb") as fh:
        return fh.readline().decode("utf-8", "replace").rstrip("\r\n")


def check_results_file(path: Path) -> None:
    """Refuse, before anything is planned, a results file a row could not be appended to: it
    must be new or empty, or carry an evalkit header this version can append under."""
    check_appendable(path)
    if not path.is_file() or path.stat().st_size == 0:
        return
    problem = header_problem(path, _first_line(path).split("\t"))
    if problem:
        raise ConfigError(problem)


def append_row(path: Path, row: ResultRow) -> None:
    """Append one row under the file's own header (writing evalkit's when the file is new)."""
    check_results_file(path)
    columns = COLUMNS
    if path.is_file() and path.stat().st_size:
        columns = _first_line(path).split("\t")
    append_locked(path, format_row(row, columns).encode("utf-8"), HEADER.encode("utf-8"))


@dataclass
class ResultsRead:
    """The rows of one results file with their line numbers, and a problem per bad line."""

    path: Path
    rows: list[tuple[int, ResultRow]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)

    @property
    def plain_rows(self) -> list[ResultRow]:
        return [row for _, row in self.rows]


def read_results(path: Path) -> ResultsRead:
    """Every row by header name; a line that does not read is named with its number and
    skipped. A file whose header is not evalkit's is one problem, and no rows."""
    found = ResultsRead(path)
    check_record(path)
    if not path.is_file():
        return found
    with path.open("rb") as stream:  # line by line: 100,000 rows are 70 MB of text
        first = stream.readline().decode("utf-8", "replace").splitlines()
        if not first:
            return found
        header = [RENAMED.get(c, c) for c in first[0].split("\t")]
        found.header = header
        missing = [c for c in REQUIRED if c not in header]
        if header[: len(CORE)] != CORE or missing:
            found.problems.append(f"{path.name}:1: not an evalkit results file header")
            return found
        known = [k in ResultRow.model_fields for k in header]
        shared: dict[str, str] = {}
        fields: set[str] = {k for k, ok in zip(header, known, strict=True) if ok}
        number = 1
        for line in first[1:]:
            number += 1
            _read_row(found, path, number, line, header, known, shared, fields)
        for raw in stream:
            for line in raw.decode("utf-8", "replace").splitlines():
                number += 1
                _read_row(found, path, number, line, header, known, shared, fields)
    return found


def _read_row(
    found: ResultsRead,
    path: Path,
    number: int,
    line: str,
    header: list[str],
    known: list[bool],
    shared: dict[str, str],
    fields: set[str],
) -> None:
    """One line's row onto found, or its problem. A value repeated down the file (a model, a
    verdict, a run id) is held once, whatever row it is in, and so is the set of fields the
    header gave (pydantic keeps one per row, 2 KB: most of a row's memory). A copy of a row
    copies that set; nothing sets a read row's fields one by one."""
    if not line.strip():
        return
    cells = line.split("\t")
    if len(cells) != len(header):
        found.problems.append(f"{path.name}:{number}: {len(cells)} columns, expected {len(header)}")
        return
    once = shared.setdefault
    if all(known):
        values = dict(zip(header, map(once, cells, cells), strict=True))
    else:
        values = {k: once(v, v) for k, v, ok in zip(header, cells, known, strict=True) if ok}
    try:
        row = ResultRow.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        found.problems.append(f"{path.name}:{number}: {where}: {first['msg']}")
        return
    if row.__pydantic_fields_set__ == fields:
        object.__setattr__(row, "__pydantic_fields_set__", fields)
    found.rows.append((number, row))


def read_rows(path: Path) -> list[ResultRow]:
    """The rows that read; raises on the first bad line, for callers that need all or none."""
    found = read_results(path)
    if found.problems:
        raise ConfigError(f"{path.parent}/{found.problems[0]}")
    return found.plain_rows

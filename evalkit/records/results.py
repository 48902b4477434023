"""The results TSV: one row per rep, appended safely by many processes at once.

Each append takes an exclusive lock and writes the whole row in a single write
call, so parallel shell loops neither tear nor drop rows. The first six columns
are the ones the autoresearch loops read.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.models import ResultRow, Verdict
from evalkit.records.appendlog import append_locked

COLUMNS = list(ResultRow.model_fields)
HEADER = "\t".join(COLUMNS) + "\n"


def _clean(value: object) -> str:
    return " ".join(str(value).replace("\t", " ").split())


def row_from_verdict(verdict: Verdict, **extra: object) -> ResultRow:
    reasons = ";".join(verdict.reasons + verdict.flags) or "-"
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


def format_row(row: ResultRow) -> str:
    return "\t".join(_clean(getattr(row, c)) for c in COLUMNS) + "\n"


def append_row(path: Path, row: ResultRow) -> None:
    append_locked(path, format_row(row).encode("utf-8"), HEADER.encode("utf-8"))


def read_rows(path: Path) -> list[ResultRow]:
    if not path.is_file():
        return []
    rows = []
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        return []
    header = lines[0].split("\t")
    if header[:6] != COLUMNS[:6]:
        raise ConfigError(f"{path}:1: not an evalkit results file (header {header[:6]})")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise ConfigError(f"{path}:{number}: {len(cells)} columns, expected {len(header)}")
        try:
            rows.append(ResultRow.model_validate(dict(zip(header, cells, strict=True))))
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: {exc}".splitlines()[0]) from None
    return rows

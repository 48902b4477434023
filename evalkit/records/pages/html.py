"""`evalkit report --html`: one page that opens from disk and shows what each rep did.

The page is built from the same report model as the terminal tables, plus each rep's
evidence folder. Everything in it came from an agent under test or a user's files, so
the data goes in as JSON a script cannot break out of, and the page's own script builds
every node with textContent. Each rep's heavy evidence (transcript, diffs, stderr, the
judge's prompt) is gzip-compressed and base64-encoded, decoded in the browser only when
the rep is opened: inline for an ordinary folder, in sibling `<script src>` files when
inline would make the page too large. Any line quoting a Task is masked (`suite/task.py`:
a Task line case-folded and re-wrapped, or a run of words shared with a Task).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import Any, Literal

from evalkit.errors import ConfigError
from evalkit.models import DIFF_SUFFIX, EvidenceLine, ResultRow
from evalkit.outpaths import replace_file, replace_folder
from evalkit.records.folder.confined import OUTSIDE, OutsideFolderError, confined
from evalkit.records.folder.keep import CHECK, JUDGE, PROCESS, STDERR, TRANSCRIPT
from evalkit.records.folder.results import read_results
from evalkit.records.folder.workdir import Workdir
from evalkit.records.pages.cells import INLINE_REPS, RepCells, cell_order
from evalkit.records.pages.target import GENERATOR, check_page, evidence_folder
from evalkit.records.report.build import build_report
from evalkit.records.report.factors import bundle_declarations
from evalkit.records.report.model import Report
from evalkit.records.rows.agent import agent_of
from evalkit.records.rows.backend import backend_of
from evalkit.records.rows.judge import judge_of
from evalkit.records.rows.subject import subject_hash_of, variant_of
from evalkit.records.verify.counts import counted_rows, final_lines
from evalkit.scoring.judge import build_prompt, final_message
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.task import MASK, TaskMask, task_mask

Placement = Literal["auto", "inline", "files"]
INLINE_LIMIT = 48 * 1024 * 1024  # bytes of encoded evidence kept inside the page under `auto`
TEXT_CAP = 512 * 1024  # a diff or stderr longer than this is cut, and says so
ASSETS = "assets"


@dataclass
class HtmlStats:
    path: Path
    reps: int
    masked_lines: int
    page_bytes: int
    evidence_bytes: int
    sibling_dir: Path | None
    problems: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- escaping


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element and in a script file: no `</script>`,
    no `<!--`, no U+2028/U+2029 line terminators can end or confuse the script."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _asset(name: str) -> str:
    asset = resources.files("evalkit.records.pages").joinpath(ASSETS, name)
    text = asset.read_text(encoding="utf-8")
    assert "</script" not in text.lower() and "</style" not in text.lower(), name
    return text


# --------------------------------------------------------------------------- masking


def _mask_value(value: Any, mask: TaskMask) -> tuple[Any, int]:
    if isinstance(value, str):
        return mask.mask(value)
    if isinstance(value, list):
        total, out = 0, []
        for item in value:
            masked, n = _mask_value(item, mask)
            out.append(masked)
            total += n
        return out, total
    if isinstance(value, dict):
        total, obj = 0, {}
        for key, item in value.items():
            masked, n = _mask_value(item, mask)
            obj[key] = masked
            total += n
        return obj, total
    return value, 0


def mask_transcript_line(line: str, mask: TaskMask) -> tuple[str, int]:
    """A stream-json line with every string line that holds a Task line masked.

    The line's text (JSON escapes of newlines, quotes and backslashes undone) is searched
    first, so the common line costs one scan and is never parsed or re-encoded.
    """
    if not mask.hits(_json_unescaped(line)):
        return line, 0
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return MASK, 1
    masked, count = _mask_value(event, mask)
    if count == 0:
        return line, 0
    return json.dumps(masked, ensure_ascii=False), count


def _json_unescaped(line: str) -> str:
    """A cheap view of a JSON line's strings as text: escaped newlines, quotes and slashes
    undone, so a Task line split by `\\n` or holding a quote is still found."""
    if "\\" not in line:
        return line
    return line.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


# --------------------------------------------------------------------------- evidence


def _read_text(path: Path | None, mask: TaskMask) -> tuple[str | None, int]:
    if path is None or not path.is_file():
        return None, 0
    data = path.read_bytes()
    cut = len(data) > TEXT_CAP
    text = data[:TEXT_CAP].decode("utf-8", "replace")
    if cut:
        text += f"\n[cut: {len(data)} bytes in the kept file, {TEXT_CAP} shown]\n"
    return mask.mask(text)


def _read_json(path: Path | None) -> Any:
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


Key = tuple[str, str, str, int]


def _evidence_folder(
    workdir: Path, row: ResultRow, lines: dict[Key, EvidenceLine]
) -> tuple[Path, EvidenceLine | None]:
    line = lines.get((row.run_id, row.scenario, row.model, row.rep))
    if line is not None:
        return workdir / line.evidence, line
    return Workdir(workdir).evidence_folder(row.run_id, row.scenario, row.model, row.rep), None


def _detail(
    root: Path,
    folder: Path,
    line: EvidenceLine | None,
    rubric: str | None,
    mask: TaskMask,
    notes: list[str],
) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(light facts kept in the overview, heavy evidence to compress, masked line count).
    A kept file whose path leads outside the results folder is never read: a note names
    it instead."""
    files = dict(line.files) if line is not None else {}
    where = os.path.relpath(folder, root)
    name = f"{line.run_id} {line.scenario} {line.model} rep-{line.rep}" if line else where

    def kept(role: str, rel: str) -> Path | None:
        try:
            return confined(root, where, rel)
        except OutsideFolderError:
            notes.append(f"{name}: {role} {rel!r} leads {OUTSIDE}; not shown")
            return None

    try:
        confined(root, where)
    except OutsideFolderError:
        notes.append(f"{name}: evidence {where!r} leads {OUTSIDE}; not shown")
        return _omitted()
    tpath = kept("transcript", files.get("transcript", TRANSCRIPT))
    transcript = tpath if tpath is not None and tpath.is_file() else None
    raw_lines, transcript_lines, masked = _transcript(transcript, mask)
    diffs, n = _diffs(folder, files, kept, mask)
    masked += n
    stderr, n = _read_text(kept("stderr", files.get("stderr", STDERR)), mask)
    masked += n
    judge = _read_json(kept("judge", files.get("judge", JUDGE)))
    prompt, prompt_matches, n = _judge_prompt(judge, rubric, raw_lines, mask)
    masked += n
    judge, n = _mask_value(judge, mask) if isinstance(judge, dict) else (judge, 0)
    masked += n
    process = _read_json(kept("process", files.get("process", PROCESS)))
    check = _read_json(kept("check", files.get("check", CHECK)))
    check, n = _mask_value(check, mask) if check is not None else (check, 0)
    masked += n
    light = {
        "found": folder.is_dir(),
        "process": process if isinstance(process, dict) else None,
        "check": check if isinstance(check, dict) else None,
        "judge": judge if isinstance(judge, dict) else None,
        "judge_prompt_matches": prompt_matches,
        "transcript_bytes": transcript.stat().st_size if transcript is not None else 0,
    }
    heavy = {
        "transcript": transcript_lines if transcript is not None else None,
        "diffs": diffs,
        "stderr": stderr,
        "judge_prompt": prompt,
    }
    return light, heavy, masked


def _transcript(path: Path | None, mask: TaskMask) -> tuple[list[str], list[str], int]:
    """(the transcript's lines as kept, the same lines masked, masked line count)."""
    if path is None:
        return [], [], 0
    raw_lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    shown: list[str] = []
    masked = 0
    for raw in raw_lines:
        text, n = mask_transcript_line(raw, mask)
        shown.append(text)
        masked += n
    return raw_lines, shown, masked


def _diffs(
    folder: Path,
    files: dict[str, str],
    kept: Callable[[str, str], Path | None],
    mask: TaskMask,
) -> tuple[dict[str, str], int]:
    """Each kept diff by fixture, masked (the folder's diff files when its line names none)."""
    diffs: dict[str, str] = {}
    masked = 0
    roles = {r: p for r, p in files.items() if r.endswith("_diff")} or {
        p.stem + "_diff": p.name for p in sorted(folder.glob("*" + DIFF_SUFFIX))
    }
    for role, rel in roles.items():
        text, n = _read_text(kept(role, rel), mask)
        if text is not None:
            diffs[role.removesuffix("_diff")] = text
            masked += n
    return diffs, masked


def _judge_prompt(
    judge: Any, rubric: str | None, raw_lines: list[str], mask: TaskMask
) -> tuple[str | None, bool | None, int]:
    """(the prompt the judge was given, rebuilt and masked; whether it hashes to the one the
    judge recorded; masked line count): none of it without a judge record, rubric or
    transcript."""
    if not (isinstance(judge, dict) and rubric is not None and raw_lines):
        return None, None, 0
    from evalkit.scoring.judge import prompt_hash

    full = build_prompt(rubric, final_message(parse_lines(raw_lines)))
    matches = prompt_hash(full) == judge.get("prompt_sha256")
    prompt, n = mask.mask(full)
    return prompt, matches, n


def _omitted() -> tuple[dict[str, Any], dict[str, Any], int]:
    light = {
        "found": False,
        "process": None,
        "check": None,
        "judge": None,
        "judge_prompt_matches": None,
        "transcript_bytes": 0,
    }
    heavy: dict[str, Any] = {"transcript": None, "diffs": {}, "stderr": None, "judge_prompt": None}
    return light, heavy, 0


def _pack(heavy: dict[str, Any]) -> str:
    raw = json.dumps(heavy, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=3, mtime=0)).decode("ascii")


# --------------------------------------------------------------------------- the page


def _rows(workdir: Path) -> list[ResultRow]:
    """Every row of the folder's results files (the page shows those `report` counts); a line
    that does not read is named by the report, not here."""
    records = Workdir(workdir)
    rows: list[ResultRow] = []
    for path in records.results_files(records.read_plans().items):
        rows += read_results(path).plain_rows
    return rows


def _tokens(text: str) -> list[str]:
    return [t for t in text.split(";") if t and t != "-"]


def _scenario_facts(suite: Suite, ids: set[str]) -> dict[str, dict[str, str]]:
    facts: dict[str, dict[str, str]] = {}
    for sid in sorted(ids):
        try:
            sf: ScenarioFile = suite.resolve(sid)
        except Exception:  # a row for a scenario no longer in the suite: shown, unlabelled
            continue
        s = sf.scenario
        # a suite without a ladder groups by kind where the others group by level
        group = s.level or s.kind or "-"
        facts[sid] = {"set": s.set, "level": group, "kind": s.kind or "", "polarity": s.polarity}
    return facts


@dataclass
class _Folder:
    """What the page reads of a results folder besides the report: rows, manifest lines by
    rep, the problems reading them, declarations by bundle, the rubric, the Task mask."""

    rows: list[ResultRow]
    manifest: dict[Key, EvidenceLine]
    problems: list[str]
    decls: dict[str, dict[str, Any]]
    rubric: str | None
    mask: TaskMask


def _read(suite: Suite, workdir: Path) -> _Folder:
    records = Workdir(workdir)
    lines: list[EvidenceLine] = []
    problems: list[str] = []
    if records.has_evidence_index():
        read_index = records.read_evidence_index()
        lines, problems = read_index.items, read_index.problems
    rubric_path = suite.rubric_path
    return _Folder(
        rows=counted_rows(_rows(workdir), lines),
        manifest={(m.run_id, m.scenario, m.model, m.rep): m for m in final_lines(lines)},
        problems=problems,
        decls=bundle_declarations(lines),
        rubric=rubric_path.read_text(encoding="utf-8") if rubric_path.is_file() else None,
        mask=task_mask(suite.scenarios("all")),
    )


def write_html(
    suite: Suite,
    workdir: Path,
    out: Path,
    placement: Placement = "auto",
    report: Report | None = None,
    inline_reps: int = INLINE_REPS,
) -> HtmlStats:
    """Write the page for WORKDIR to OUT (and OUT's sibling folder when evidence goes there),
    each whole, once `page_target` has found OUT safe to write. Past INLINE_REPS reps (and
    unless asked for one self-contained file) the rep list goes to per-cell files too."""
    workdir = workdir.resolve()
    check_page(suite, workdir, out, evidence=placement != "inline")
    built = report or build_report(suite, workdir)
    folder = _read(suite, workdir)
    cells = _rep_cells(folder.rows, folder.decls, placement, inline_reps)
    if cells is not None:
        placement = "files"
    reps: list[str] = []
    totals = {"masked": 0, "bytes": 0}
    roots = _roots(suite.root.resolve(), workdir)
    blobs = _evidence(folder, workdir, roots, reps, cells, totals)
    placement, packed, sibling = _place(placement, blobs, totals, out, cells)
    report_data, n = _mask_value(json.loads(built.model_dump_json()), folder.mask)
    masked_total = totals["masked"] + n
    data = {
        "report": report_data,
        "scenarios": _scenario_facts(suite, {r.scenario for r in folder.rows}),
        "masked_lines": masked_total,
        "mask_text": MASK,
        "evidence": {
            "placement": placement,
            "folder": sibling.name if sibling else None,
        },
        "problems": folder.problems,
        "cells": cells.summaries if cells is not None else None,
        "rep_count": len(folder.rows),
    }
    data_json = '{"reps":[' + ",".join(reps) + "]," + script_json(_relative(data, roots))[1:]
    reps.clear()
    page = _page(built.suite, data_json, packed if placement == "inline" else None)
    del data_json
    replace_file(out, page)
    return HtmlStats(
        path=out,
        reps=len(folder.rows),
        masked_lines=masked_total,
        page_bytes=len(page),
        evidence_bytes=totals["bytes"],
        sibling_dir=sibling,
        problems=folder.problems,
    )


def _evidence(
    folder: _Folder,
    workdir: Path,
    roots: list[tuple[str, str]],
    reps: list[str],
    cells: RepCells | None,
    totals: dict[str, int],
) -> Iterator[str]:
    """Each rep's packed evidence in turn, its overview entry kept in `reps` (or its cell) as
    the text the page carries (as records, 100,000 entries would hold gigabytes)."""
    mask = folder.mask
    for index, row in enumerate(folder.rows):
        where, line = _evidence_folder(workdir, row, folder.manifest)
        light, heavy, masked = _detail(workdir, where, line, folder.rubric, mask, folder.problems)
        entry = row.model_dump()
        decl = folder.decls.get(row.bundle_id, {})
        entry.update(
            id=index,
            variant=variant_of(row, decl),
            subject_hash=subject_hash_of(row, decl),
            judged_by=judge_of(decl),
            agent=agent_of(decl),
            backend=backend_of(decl),
            reasons=_tokens(row.reasons),
            flags=_tokens(row.flags),
            evidence=str(where.relative_to(workdir)) if where.is_relative_to(workdir) else "",
            **light,
        )
        entry, n = _mask_value(entry, mask)
        totals["masked"] += masked + n
        _keep(_relative(entry, roots), reps, cells)
        blob = _pack(heavy)
        totals["bytes"] += len(blob)
        yield blob


def _place(
    placement: Placement,
    blobs: Iterator[str],
    totals: dict[str, int],
    out: Path,
    cells: RepCells | None,
) -> tuple[Placement, list[str], Path | None]:
    """(where the evidence went, the blobs the page carries inline, the sibling folder).
    Blobs are held only until it is clear they fit inside the page; past that they are
    written out rep by rep, so a folder of any size is never held whole."""
    packed: list[str] = []
    if placement != "files":
        for blob in blobs:
            packed.append(blob)
            if placement == "auto" and totals["bytes"] > INLINE_LIMIT:
                break
        else:
            return "inline", packed, None
    sibling = evidence_folder(out)
    files = (
        (f"rep-{index}.js", f"evalkitEvidence({index},{script_json(blob)});\n".encode())
        for index, blob in enumerate(chain(packed, blobs))
    )
    replace_folder(sibling, cells.files(files) if cells is not None else files)
    return "files", [], sibling


def _page(suite_name: str, data_json: str, inline: list[str] | None) -> bytes:
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        GENERATOR,
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'; img-src data:\">",
        f"<title>evalkit report: {_attr(suite_name)}</title>",
        f"<style>{_asset('report.css')}</style></head><body>",
        '<div id="app">Loading… (this page needs JavaScript)</div>',
        f'<script type="application/json" id="evalkit-data">{data_json}</script>',
    ]
    if inline is not None:
        parts.append(
            f'<script type="application/json" id="evalkit-evidence">{script_json(inline)}</script>'
        )
    parts.append(f"<script>{_asset('report.js')}</script></body></html>\n")
    return "".join(parts).encode("utf-8")


def _rep_cells(
    rows: list[ResultRow], decls: dict[str, dict[str, Any]], placement: Placement, inline_reps: int
) -> RepCells | None:
    """Where a large folder's rep list goes, its rows sorted so each cell's reps come
    together; None when the list stays in the page."""
    if placement == "inline" or len(rows) <= inline_reps:
        return None

    def key(row: ResultRow) -> tuple[str, ...]:
        decl = decls.get(row.bundle_id, {})
        return cell_order(
            {
                "scenario": row.scenario,
                "model": row.model,
                "variant": variant_of(row, decl),
                "subject_hash": subject_hash_of(row, decl),
                "cli_version": row.cli_version,
                "judged_by": judge_of(decl),
                "agent": agent_of(decl),
                "backend": backend_of(decl),
            }
        )

    rows.sort(key=key)
    return RepCells()


def _keep(entry: dict[str, Any], reps: list[str], cells: RepCells | None) -> None:
    text = script_json(entry)
    if cells is None:
        reps.append(text)
    else:
        cells.add(entry, text)


def _roots(suite_root: Path, workdir: Path) -> list[tuple[str, str]]:
    """Each absolute folder a page's text may name, longest first, and what it shows instead."""
    shown = shown_folder(suite_root, workdir)
    return [
        (f"{workdir}/", f"{shown}/"),
        (str(workdir), shown),
        (f"{suite_root}/", ""),
        (str(suite_root), "."),
    ]


def _relative(value: Any, roots: list[tuple[str, str]]) -> Any:
    """`value` with every string naming the results folder or the suite by absolute path
    naming it relative instead."""
    if isinstance(value, str):
        for absolute, shown in roots:
            value = value.replace(absolute, shown)
        return value
    if isinstance(value, list):
        return [_relative(item, roots) for item in value]
    if isinstance(value, dict):
        return {key: _relative(item, roots) for key, item in value.items()}
    return value


def shown_folder(suite_root: Path, workdir: Path) -> str:
    """How a page names its results folder: relative to the suite when inside it, else by
    its own name. A page is shared, so it never names where this machine keeps a folder."""
    if workdir.is_relative_to(suite_root):
        return workdir.relative_to(suite_root).as_posix() or "."
    return workdir.name


def _attr(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def parse_placement(value: str) -> Placement:
    if value not in ("auto", "inline", "files"):
        raise ConfigError(f"--evidence takes auto, inline or files, not {value!r}")
    return value  # type: ignore[return-value]

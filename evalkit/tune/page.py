"""The tune's trajectory as one HTML page: a line per round, its run-set difference with its
interval and the decision, and the reserve's verdict last.

Everything on it comes from `tune.jsonl`, which evalkit wrote: variant names, hashes,
numbers and reason tokens (the scenario ids a reason names among them), never a Task line or
anything the agent wrote; every value is escaped all the same. The page is written beside
and renamed, never over or inside what evalkit reads (`records/pages/target.py`).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from evalkit.outpaths import replace_file
from evalkit.records.pages.target import check_page
from evalkit.suite.config import Suite
from evalkit.tune.lineage import LINEAGE

VERDICTS = {0: "confirmed", 1: "worse", 2: "untrusted", 3: "cannot tell"}
STYLE = (
    "body{font:14px system-ui,sans-serif;margin:2em;max-width:72em}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;"
    "text-align:left;vertical-align:top}.accepted{background:#e6f4ea}"
    ".rejected,.worse{background:#fdecea}.confirmed{background:#d2eddb}"
)


def check_target(suite: Suite, work: Path, out: Path) -> None:
    """Refuse OUT before anything runs when it is no place for a page."""
    check_page(suite, work, out, evidence=False)


def _delta(line: dict[str, Any]) -> str:
    delta, interval = line.get("delta"), line.get("interval")
    if delta is None:
        return "-"
    shown = f"{delta:+.3f}"
    return shown + (f" [{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else "")


def _row(line: dict[str, Any]) -> str:
    if line.get("kind") == "reserve":
        verdict = VERDICTS.get(int(line.get("code", 3)), "cannot tell")
        cells = ["reserve", line.get("variant"), "suite", verdict, _delta(line),
                 line.get("reps", 0), line.get("reason", "")]  # fmt: skip
        css = verdict.replace(" ", "-")
    else:
        cells = [line.get("round"), line.get("variant") or "-", line.get("parent"),
                 line.get("decision"), _delta(line),
                 line.get("reps", 0) + line.get("proposer_reps", 0),  # its proposer's too
                 line.get("reason", "")]  # fmt: skip
        css = str(line.get("decision", ""))
    tds = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
    return f'<tr class="{escape(css)}">{tds}</tr>'


def render(lines: list[dict[str, Any]]) -> str:
    tune = escape(str(lines[0].get("tune", ""))) if lines else ""
    head = "".join(f"<th>{h}</th>" for h in ("round", "variant", "parent", "decision",
                                             "run-set Δ [95%]", "reps", "why"))  # fmt: skip
    rows = "\n".join(_row(x) for x in lines if x.get("kind") in ("round", "reserve"))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="generator" content="evalkit tune">'
        f"<title>{tune}</title>"
        f"<style>{STYLE}</style></head><body><h1>{tune}</h1>"
        "<p>Each round's candidate against its parent on the run set (recorded "
        "contaminated); the reserve's one verdict last.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>\n{rows}\n</tbody></table>"
        "</body></html>\n"
    )


def write_page(suite: Suite, work: Path, out: Path) -> Path:
    """The page of WORKDIR's tune.jsonl, written to OUT."""
    check_target(suite, work, out)
    path = work / LINEAGE
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    replace_file(out, render(lines).encode("utf-8"))
    return out

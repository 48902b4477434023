"""Whether a rep's declared `capabilities` (each limit it was held to, and how) agree with the
rest of its record: a limit its CLI took shows that option in its `cli_flags` (and one that
names no option was not the CLI's), a case's tool list is never missing, and a rep evalkit
stopped at a turn cap declared that evalkit held one. Bundles from before the record (no
`capabilities`) are not asked."""

from __future__ import annotations

from typing import Any

from evalkit.scoring.decide import ProcessRecord

MISMATCH = "capabilities-do-not-match"


def capability_problems(
    declarations: dict[str, Any], tools: list[str] | None, process: ProcessRecord | None
) -> list[str]:
    applied = declarations.get("capabilities")
    if not isinstance(applied, dict):
        return []
    flags = [str(f) for f in declarations.get("cli_flags") or []]
    problems = []
    for name, how in sorted(applied.items()):
        if not isinstance(how, dict) or "by" not in how:
            continue
        flag = how.get("flag")
        shown = isinstance(flag, str) and flag in flags
        if (how["by"] == "cli") != shown:
            problems.append(f"{MISMATCH}:{name}")
    if tools is not None and not isinstance(applied.get("tools"), dict):
        problems.append(f"{MISMATCH}:tools")
    capped = applied.get("max_turns")
    by_evalkit = isinstance(capped, dict) and capped.get("by") == "evalkit"
    if process is not None and process.stopped == "max-turns" and not by_evalkit:
        problems.append(f"{MISMATCH}:max_turns")
    return problems

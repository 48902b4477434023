"""Options that several commands share, spelled once."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

RetryErrors = Annotated[
    int,
    typer.Option(
        "--retry-errors",
        min=0,
        help="run an infrastructural ERROR (429, 5xx, 529, cut stream, timeout, crash before "
        "the first message) again, up to K (at most 10) more times, after a jittered wait; "
        "never a FAIL, breach or auth error",
    ),
]
MaxTurns = Annotated[
    int | None,
    typer.Option(
        "--max-turns", min=1, help="passed to the CLI; a rep that hits it is budget:max-turns"
    ),
]
JudgeTimeout = Annotated[
    float,
    typer.Option(
        "--judge-timeout",
        help="seconds the judge may take before the row is judge-error:judge-timeout",
    ),
]

SkipPreflight = Annotated[
    bool,
    typer.Option(
        "--skip-preflight",
        help="for a real model, skip proving the instrument first (the self-test and one "
        "policy:oracle rep through the CLI); the plan records that it was skipped",
    ),
]
Unconfined = Annotated[
    bool,
    typer.Option(
        "--unconfined",
        help="run reps without their OS sandbox (where none is available); every row is "
        "flagged unconfined and the folder never verifies PUBLISHABLE",
    ),
]
Confine = Annotated[
    str,
    typer.Option(
        "--confine",
        help="the OS sandbox each rep runs in: bwrap, srt, docker or podman (default: bwrap "
        "on Linux, srt on macOS); each rep's bundle declares it",
        show_default=False,
    ),
]
UNCONFINED_BANNER = (
    "UNCONFINED: these reps run without their OS sandbox; the agent can reach the whole "
    "machine, and the rows are flagged unconfined (never PUBLISHABLE)"
)


def notice(text: str) -> None:
    """A library's word to the person waiting (a slow judge), on stderr."""
    from evalkit.cli.app import err

    err.print(text, markup=False, style="dim")


AgentOption = Annotated[
    str,
    typer.Option(
        "--agent",
        help="the agent CLI each rep runs: claude, codex or gemini (a real model needs its key)",
    ),
]


SELECTORS = "variant:NAME, model:NAME, run:ID, judge:IDENTITY, cli:VERSION or agent:NAME"
FirstFolder = Annotated[
    Path, typer.Argument(help="A's results folder; alone, B's (A is the baseline)")
]
SecondFolder = Annotated[
    Path | None,
    typer.Argument(help="B's results folder; omit to select within FIRST or use the baseline"),
]
SideA = Annotated[str, typer.Option("--a", help=f"narrow A: {SELECTORS}")]
SideB = Annotated[str, typer.Option("--b", help=f"narrow B: {SELECTORS}")]


class Format(StrEnum):
    """How `compare` and `gate` print their verdict."""

    table = "table"
    markdown = "markdown"
    json = "json"
Wide = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="every column in one table, however wide the terminal (default: a compact "
        "table that fits 80 columns, long notes below it)",
    ),
]
AllowBackends = Annotated[
    bool,
    typer.Option(
        "--allow-backends",
        help="compare sides confined by different OS sandboxes (bwrap, srt), naming it: e.g. "
        "a macOS author's folder against a Linux CI baseline",
    ),
]

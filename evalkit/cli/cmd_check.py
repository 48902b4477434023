"""`evalkit check`: score a sandbox and its transcript; exit 0 PASS, 1 FAIL, 3 ERROR."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.cli.options import JudgeTimeout, notice
from evalkit.errors import ConfigError

EXIT = {"PASS": 0, "FAIL": 1, "ERROR": 3}


@command("check", short_help="Score one sandbox and its transcript: PASS, FAIL or ERROR.")
def check(
    args: Annotated[
        list[str],
        typer.Argument(
            metavar="[SCENARIO] SANDBOX",
            help="the scenario defaults to the one in SANDBOX/sandbox.json",
            show_default=False,
        ),
    ],
    tsv: Annotated[
        str | None, typer.Option("--tsv", metavar="MODEL", help="print the TSV row for MODEL")
    ] = None,
    results: Annotated[Path | None, typer.Option("--results", help="append the row here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the verdict as JSON")] = False,
    judge_timeout: JudgeTimeout = 300.0,
) -> None:
    """Score SANDBOX/transcript.jsonl and the sandbox's files.

    The scenario defaults to the one recorded in SANDBOX/sandbox.json.

    Example: `evalkit check /tmp/sbx-p1 --tsv sonnet --results results.tsv`
    """
    from evalkit import __version__
    from evalkit.cli.app import out
    from evalkit.records.folder.results import append_row, format_row, row_from_verdict
    from evalkit.run.judges import default_judge
    from evalkit.run.request import check_limit
    from evalkit.run.sandbox_check import check_sandbox

    if len(args) not in (1, 2):
        raise ConfigError("check takes [SCENARIO] SANDBOX")
    scenario, sandbox = (None, args[0]) if len(args) == 1 else (args[0], args[1])
    check_limit("--judge-timeout", judge_timeout)
    suite = state.suite()
    judge = default_judge(suite, judge_timeout, notice)
    verdict = check_sandbox(suite, Path(sandbox), scenario, model=tsv or "-", judge=judge)
    row = row_from_verdict(verdict, evalkit_version=__version__)
    if as_json:
        print(verdict.model_dump_json(indent=2))
    elif tsv is not None:
        print(format_row(row), end="")
    else:
        out.print(f"{verdict.verdict}  {verdict.axis_a} {verdict.axis_b}  {row.reasons}")
    if results is not None:
        append_row(results, row)
    raise typer.Exit(EXIT[verdict.verdict])

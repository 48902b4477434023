"""`evalkit export`: a results folder in a format the tools a team already runs can read."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.errors import ConfigError


class ExportFormat(StrEnum):
    otlp = "otlp"
    otlp_json = "otlp-json"


@command("export", short_help="Write a results folder as traces other tools read.")
def export_command(
    workdir: Annotated[Path, typer.Argument(help="the results folder")],
    fmt: Annotated[
        ExportFormat,
        typer.Option("--format", help="otlp (sent to --endpoint) or otlp-json (written to --out)"),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="otlp-json: the file to write")
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option("--endpoint", metavar="URL", help="otlp: a collector's OTLP/HTTP base URL"),
    ] = None,
) -> None:
    """One span per rep under one span for the folder, a `gen_ai.evaluation.result` event per
    verdict (an ERROR is a span in error, never a score of 0), ids and reasons only: never a
    Task, a transcript or a machine path. The root span says whether the folder verifies
    PUBLISHABLE.

    Example: `evalkit export results/ --format otlp --endpoint http://127.0.0.1:4318`,
    `evalkit export results/ --format otlp-json --out traces.jsonl`
    """
    import sys

    from evalkit.exports.otlp import send_otlp, write_otlp_json

    suite = state.suite()
    if fmt is ExportFormat.otlp_json:
        if out is None or endpoint is not None:
            raise ConfigError("export --format otlp-json: give --out FILE (and no --endpoint)")
        spans = write_otlp_json(workdir, out, suite=suite)
        print(f"wrote {out}: {spans} rep span(s)", file=sys.stderr)
        return
    if endpoint is None or out is not None:
        raise ConfigError("export --format otlp: give --endpoint URL (and no --out)")
    spans = send_otlp(workdir, endpoint, suite=suite)
    print(f"sent {spans} rep span(s) to {endpoint}", file=sys.stderr)

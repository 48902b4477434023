"""`evalkit export`: a results folder in a format the tools a team already runs can read."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import command, state
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit.suite.config import Suite


class ExportFormat(StrEnum):
    inspect = "inspect"
    otlp = "otlp"
    otlp_json = "otlp-json"


@command("export", short_help="Write a results folder as an Inspect log or as traces.")
def export_command(
    workdir: Annotated[Path, typer.Argument(help="the results folder")],
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            help="inspect (an Inspect AI .eval log to --out), otlp (sent to --endpoint) or "
            "otlp-json (written to --out)",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="inspect, otlp-json: the file to write"),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option("--endpoint", metavar="URL", help="otlp: a collector's OTLP/HTTP base URL"),
    ] = None,
) -> None:
    """inspect: an Inspect AI log, one sample per rep (id the scenario, epoch the rep), the
    verdict, axes, reasons and flags as scores, an ERROR row an errored sample, the kept
    transcript as its messages with every Task line masked; its header names the suite, the
    lock and whether the folder verifies PUBLISHABLE. otlp: one span per rep under one span
    for the folder, a `gen_ai.evaluation.result` event per verdict (an ERROR is a span in
    error, never a score of 0), ids and reasons only: never a Task, a transcript or a machine
    path. The root span says whether the folder verifies PUBLISHABLE.

    Example: `evalkit export results/ --format inspect --out results.eval`,
    `evalkit export results/ --format otlp --endpoint http://127.0.0.1:4318`,
    `evalkit export results/ --format otlp-json --out traces.jsonl`
    """
    import sys

    suite = state.suite()
    if fmt is ExportFormat.inspect:
        if out is None or endpoint is not None:
            raise ConfigError("export --format inspect: give --out FILE.eval (and no --endpoint)")
        _inspect(suite, workdir, out)
        return
    from evalkit.exports.otlp import send_otlp, write_otlp_json

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


def _inspect(suite: Suite, workdir: Path, out: Path) -> None:
    """The log written, said in one line; a folder not PUBLISHABLE said in one more."""
    import sys

    from evalkit.exports.inspect_log import write_inspect_log

    written = write_inspect_log(suite, workdir, out)
    errored = f", {written.errored} errored" if written.errored else ""
    print(f"wrote {out}: {written.samples} sample(s){errored}", file=sys.stderr)
    if not written.publishable:
        print(f"evalkit: {out}: the folder is {written.verdict}; the log says so", file=sys.stderr)

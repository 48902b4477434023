"""The options that choose the subject (the wording under test), shared by run, grid, calibrate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PluginOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--plugin",
        metavar="DIR",
        help="an outside working copy of a plugin, in place of the suite's plugin of the same "
        "name (repeatable)",
    ),
]
VariantOption = Annotated[
    str | None,
    typer.Option(
        "--variant",
        help="a variant named in evalkit.yaml, or none: no plugin and no subject file "
        "(default: the suite's own)",
    ),
]
CliOption = Annotated[
    str | None,
    typer.Option(
        "--cli",
        metavar="VERSION",
        help="the Claude Code version to run, installed once into the version cache "
        "(default: the pinned one)",
    ),
]

"""The evalkit command: each subcommand lives in its own module and registers itself here."""

from __future__ import annotations

from evalkit.cli import cmd_check, cmd_list, cmd_sandbox, cmd_selftest  # noqa: F401
from evalkit.cli.app import app


def main() -> None:
    app()

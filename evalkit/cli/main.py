"""The evalkit command: each subcommand lives in its own module and registers itself here."""

from __future__ import annotations

from evalkit.cli import (  # noqa: F401
    cmd_aa,
    cmd_baseline,
    cmd_bisect,
    cmd_build,
    cmd_calibrate,
    cmd_check,
    cmd_cli,
    cmd_compare,
    cmd_doctor,
    cmd_export,
    cmd_gate,
    cmd_grid,
    cmd_import,
    cmd_init,
    cmd_list,
    cmd_lock,
    cmd_merge,
    cmd_migrate,
    cmd_report,
    cmd_rescore,
    cmd_run,
    cmd_sandbox,
    cmd_selftest,
    cmd_split_reserve,
    cmd_tune,
    cmd_verify,
    cmd_watch,
)
from evalkit.cli.app import app


def main() -> None:
    app()

"""`--help` and `list` load only what they use, which is what lets them start quickly.

Each case runs the commands in a fresh interpreter and reads back the modules it then holds,
so a command module that imports the library at its top again shows up here by name.
(How long they take is `bench/startup.py`'s to print, never a test's to assert.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer.main

from evalkit.cli.main import app
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]

PROBE = """
import contextlib, io, json, sys
from evalkit.cli.main import app
codes = []
for args in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            app(args, prog_name="evalkit")
        except SystemExit as exc:
            codes.append(exc.code)
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""

HELP_MAY_LOAD = {
    "evalkit",
    "evalkit.errors",
    "evalkit.cli",
    "evalkit.cli.app",
    "evalkit.cli.main",
    "evalkit.cli.options",
    "evalkit.cli.subject_options",
    "evalkit.run",
    "evalkit.run.defaults",
}
LIST_MAY_NOT_LOAD = {
    "rich",
    "ruamel.yaml",
    "evalkit.checkers",
    "evalkit.scoring.checker",
    "evalkit.suite.config",
    "evalkit.run.context",
    "evalkit.run.rep",
    "evalkit.run.session",
    "evalkit.records",
    "evalkit.reference",
    "evalkit.compare",
}


def _loaded_after(*invocations: list[str]) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_SUITE"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(invocations)],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)
    assert found["codes"] == [0] * len(invocations), done.stderr
    return set(found["modules"])


def test_help_of_the_command_and_of_each_subcommand_loads_no_library_code() -> None:
    loaded = _loaded_after(["--help"], *([name, "--help"] for name in COMMANDS))
    ours = {m for m in loaded if m.split(".")[0] == "evalkit"}
    commands = {m for m in ours if m.startswith("evalkit.cli.cmd_")}
    assert ours - commands - HELP_MAY_LOAD == set()


def test_list_loads_neither_the_checker_nor_the_runner_nor_rich() -> None:
    suite = ["--suite", str(REPO)]
    loaded = _loaded_after([*suite, "list"], [*suite, "list", "--set", "all", "--json"])
    assert LIST_MAY_NOT_LOAD & loaded == set()

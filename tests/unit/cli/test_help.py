"""`evalkit --help` reads cleanly, and the guide's synopsis of each command (its in-depth
page) matches it."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.core import TyperArgument, TyperOption
from typer.testing import CliRunner

from evalkit.cli.app import SECTIONS
from evalkit.cli.main import app
from tests.conftest import REPO

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
GROUP = typer.main.get_command(app)
COMMANDS = sorted(GROUP.commands)  # type: ignore[attr-defined]


def _help(*args: str) -> str:
    result = runner.invoke(app, [*args, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_flags_show_no_bool_metavar(name: str) -> None:
    text = _help(*([name] if name else []))
    assert "<bool>" not in text


def test_the_policy_model_spelling_survives_the_markup() -> None:
    assert "policy:<name>" in _help("run")
    assert "policy:<name>" in _help("grid")


def test_the_command_list_fits_one_screen_of_80_by_40_and_cuts_no_summary() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert len(lines) < 40, len(lines)
    assert max(map(len, lines)) <= 80
    listed = result.stdout.split("COMMAND [ARGS]...", 1)[1]
    assert "…" not in listed and "..." not in listed


def test_every_command_is_placed_in_exactly_one_section_of_the_command_list() -> None:
    placed = [name for names in SECTIONS.values() for name in names]
    assert sorted(placed) == COMMANDS


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_says_what_it_does(name: str) -> None:
    command = GROUP.commands[name]  # type: ignore[attr-defined]
    silent = [p.opts[0] for p in command.params if isinstance(p, TyperOption) and not p.help]
    assert silent == []


def _readme_synopses() -> dict[str, str]:
    """command -> the synopsis in its first in-depth heading (`### `evalkit NAME …``)."""
    found: dict[str, str] = {}
    for line in (REPO / "docs" / "usage.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            for span in re.findall(r"`(evalkit [^`]+)`", line):
                found.setdefault(span.split()[1], span)
    return found


Parsed = tuple[list[tuple[str, bool]], set[str]]


def _parse(synopsis: str, command: typer.core.TyperCommand) -> Parsed:
    """(positional arguments with whether each is required, option names) of a synopsis."""
    flags = {
        opt: isinstance(p, TyperOption) and p.is_flag
        for p in command.params
        for opt in getattr(p, "opts", [])
    }
    tokens = re.findall(r"\[|\]|[^\s\[\]]+", synopsis)[2:]
    positionals: list[tuple[str, bool]] = []
    options: set[str] = set()
    depth, skip = 0, False
    for token in tokens:
        if token == "[":
            depth += 1
        elif token == "]":
            depth -= 1
        elif skip:
            skip = False
        elif token.startswith("--"):
            options.add(token)
            skip = not flags.get(token, True)
        elif token.rstrip(".…").isupper():
            positionals.append((token.rstrip(".…").lower(), depth == 0))
    return positionals, options


def test_every_command_has_a_readme_synopsis() -> None:
    assert sorted(_readme_synopses()) == COMMANDS


@pytest.mark.parametrize("name", COMMANDS)
def test_the_readme_synopsis_matches_the_help(name: str) -> None:
    command = GROUP.commands[name]  # type: ignore[attr-defined]
    synopsis = _readme_synopses().get(name, f"evalkit {name}")
    positionals, options = _parse(synopsis, command)
    arguments: list[tuple[str, bool]] = []
    for p in command.params:
        if isinstance(p, TyperArgument):
            if p.metavar:
                arguments += _parse(f"evalkit {name} {p.metavar}", command)[0]
            else:
                arguments.append((p.name or "", p.required))
    declared = {
        opt
        for p in command.params
        if isinstance(p, TyperOption)
        for opt in p.opts
        if opt.startswith("--") and opt != "--help"
    }
    assert (positionals, sorted(options)) == (arguments, sorted(declared)), synopsis

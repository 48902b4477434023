"""`evalkit --help` reads cleanly, and the guide's synopsis of each command (its in-depth
page) matches it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

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


def _is_group(command: Any) -> bool:
    return isinstance(getattr(command, "commands", None), dict)


def _walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command's path under `evalkit`, groups and their commands and the hidden old
    names included."""
    yield path
    if _is_group(command):
        for name, sub in command.commands.items():
            yield from _walk(sub, (*path, name))


def _command(path: tuple[str, ...]) -> Any:
    found: Any = GROUP
    for name in path:
        found = found.commands[name]
    return found


def _shown(path: tuple[str, ...]) -> bool:
    return not any(_command(path[:i]).hidden for i in range(1, len(path) + 1))


PATHS = [path for path in _walk(GROUP) if path]
SHOWN = [path for path in PATHS if not _is_group(_command(path)) and _shown(path)]
VISIBLE = sorted(path[0] for path in PATHS if len(path) == 1 and _shown(path))
GROUPS = {path[0] for path in PATHS if len(path) == 1 and _is_group(_command(path))}


def _help(*args: str) -> str:
    result = runner.invoke(app, [*args, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", [(), *PATHS], ids=" ".join)
def test_flags_show_no_bool_metavar(path: tuple[str, ...]) -> None:
    text = _help(*path)
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


@pytest.mark.parametrize("path", PATHS, ids=" ".join)
def test_every_command_s_summary_is_one_whole_sentence(path: tuple[str, ...]) -> None:
    summary = _command(path).get_short_help_str(limit=200)
    assert summary.endswith(".") and summary.count(". ") == 0 and "…" not in summary, summary


def test_every_shown_command_is_placed_in_exactly_one_section_of_the_command_list() -> None:
    placed = [name for names in SECTIONS.values() for name in names]
    assert len(placed) == len(set(placed))
    assert sorted(set(placed) & set(VISIBLE)) == VISIBLE


@pytest.mark.parametrize("path", PATHS, ids=" ".join)
def test_every_option_and_argument_says_what_it_does(path: tuple[str, ...]) -> None:
    params = _command(path).params
    silent = [p.name for p in params if not getattr(p, "help", None)]
    assert silent == []


def _readme_synopses() -> dict[str, str]:
    """command path -> the synopsis in its first in-depth heading (`### `evalkit NAME …`` or
    `### `evalkit GROUP NAME …``)."""
    found: dict[str, str] = {}
    for line in (REPO / "docs" / "usage.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            for span in re.findall(r"`(evalkit [^`]+)`", line):
                words = span.split()
                key = " ".join(words[1:3] if words[1] in GROUPS else words[1:2])
                found.setdefault(key, span)
    return found


Parsed = tuple[list[tuple[str, bool]], set[str]]


def _parse(synopsis: str, command: Any, depth_of_name: int) -> Parsed:
    """(positional arguments with whether each is required, option names) of a synopsis."""
    flags = {
        opt: isinstance(p, TyperOption) and p.is_flag
        for p in command.params
        for opt in getattr(p, "opts", [])
    }
    tokens = re.findall(r"\[|\]|[^\s\[\]]+", synopsis)[1 + depth_of_name :]
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


def test_every_shown_command_has_a_readme_synopsis() -> None:
    assert sorted(_readme_synopses()) == sorted(" ".join(path) for path in SHOWN)


@pytest.mark.parametrize("path", SHOWN, ids=" ".join)
def test_the_readme_synopsis_matches_the_help(path: tuple[str, ...]) -> None:
    command, name = _command(path), " ".join(path)
    synopsis = _readme_synopses().get(name, f"evalkit {name}")
    positionals, options = _parse(synopsis, command, len(path))
    arguments: list[tuple[str, bool]] = []
    for p in command.params:
        if isinstance(p, TyperArgument):
            if p.metavar:
                arguments += _parse(f"evalkit {name} {p.metavar}", command, len(path))[0]
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

"""The command reference as Markdown, written from the CLI's own Click objects.

The guide's reference page is filled from this when the site is built, so a command, an
argument or an option cannot be added, renamed or reworded without the page following.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any

import typer.main

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.app import app

PROG = "evalkit"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    value = param.default
    if value is None or value is False or value == "" or getattr(param, "is_flag", False):
        return ""
    if isinstance(value, Enum):
        value = value.value
    return f"`{value}`"


def _usage(name: str, command: Any) -> str:
    pieces = ["[OPTIONS]"] if any(p.param_type_name == "option" for p in command.params) else []
    for param in command.params:
        if param.param_type_name != "argument":
            continue
        shown = param.name.upper() + ("…" if param.nargs == -1 else "")
        pieces.append(shown if param.required else f"[{shown}]")
    return " ".join([PROG, name, *pieces])


def _rows(command: Any) -> Iterator[str]:
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            names = f"`{param.name.upper()}`"
        else:
            names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
        help_text = getattr(param, "help", None) or ""
        yield f"| {names} | {_cell(help_text)} | {_default(param)} |"


def _shown(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(name, command) of every command `--help` shows, a group's own commands after it; an
    old name kept hidden for a release is left out, as `--help` leaves it."""
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        yield " ".join((*path, name)), command
        if isinstance(getattr(command, "commands", None), dict):
            yield from _shown(command, (*path, name))


def _section(name: str, command: Any) -> list[str]:
    out = [f"## `{PROG} {name}`", "", (command.help or "").strip(), ""]
    subcommands = getattr(command, "commands", None)
    if isinstance(subcommands, dict):
        listed = [f"`{PROG} {name} {sub}`" for sub in command.list_commands(None)]
        return [*out, f"Its commands: {', '.join(listed)}.", ""]
    out += ["```text", _usage(name, command), "```", ""]
    out += ["| argument or option | what | default |", "| --- | --- | --- |"]
    return [*out, *_rows(command), ""]


def reference_markdown() -> str:
    """One section per command, in name order: what it does, its usage and its parameters;
    a group's section names its commands, each of which has its own."""
    group: Any = typer.main.get_command(app)
    out: list[str] = [f"## `{PROG}`", "", "Options every command takes, given before it.", ""]
    out += ["| option | what | default |", "| --- | --- | --- |", *_rows(group), ""]
    for name, command in _shown(group):
        out += _section(name, command)
    return "\n".join(out)

"""The guide's command reference is written from the CLI, so it names every command and option
`--help` shows, a group's commands included, and no old name kept hidden for a release."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer.main

from evalkit.cli.main import app
from evalkit.cli.reference_doc import reference_markdown

pytestmark = pytest.mark.heavy

GROUP = typer.main.get_command(app)


def _shown(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    for name, command in group.commands.items():
        if not command.hidden:
            yield " ".join((*path, name)), command
            if isinstance(getattr(command, "commands", None), dict):
                yield from _shown(command, (*path, name))


def test_every_shown_command_has_its_section() -> None:
    text = reference_markdown()
    names = [name for name, _ in _shown(GROUP)]
    assert "suite freeze" in names and "import inspect" in names
    for name in names:
        assert f"## `evalkit {name}`" in text, name


def test_an_old_name_kept_for_a_release_has_no_section() -> None:
    text = reference_markdown()
    assert "## `evalkit freeze`" not in text and "## `evalkit rescore`" not in text


def test_every_option_of_every_command_is_named() -> None:
    text = reference_markdown()
    for name, command in _shown(GROUP):
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert f"`{opt}`" in text, (name, opt)


def test_the_global_options_lead() -> None:
    assert "`--suite`" in reference_markdown().split("## `evalkit aa`")[0]

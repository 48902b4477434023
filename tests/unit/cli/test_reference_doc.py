"""The guide's command reference is written from the CLI, so it names every command and option."""

from __future__ import annotations

import typer.main

from evalkit.cli.main import app
from evalkit.cli.reference_doc import reference_markdown

GROUP = typer.main.get_command(app)


def test_every_command_has_its_section() -> None:
    text = reference_markdown()
    for name in GROUP.commands:  # type: ignore[attr-defined]
        assert f"## `evalkit {name}`" in text, name


def test_every_option_of_every_command_is_named() -> None:
    text = reference_markdown()
    for name, command in GROUP.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert f"`{opt}`" in text, (name, opt)


def test_the_global_options_lead() -> None:
    assert "`--suite`" in reference_markdown().split("## `evalkit baseline`")[0]

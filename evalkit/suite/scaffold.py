"""`evalkit init`: a complete, working suite written from a template shipped in the package.

The templates' Tasks are public placeholders. They are copied, never printed, and
must be rewritten before anything is measured.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from evalkit.errors import ConfigError, RefusedError
from evalkit.outpaths import blocking_file, cannot_write, make_folder
from evalkit.suite.catalog import CONFIG_NAME
from evalkit.suite.schemas import EDITOR_LINE, write_schemas

TEMPLATES = ("blank", "vault-write", "adr")
_DOTTED = {"_claude-plugin": ".claude-plugin"}
"""Folders stored without their leading dot, so every packaging tool ships them."""


@dataclass(frozen=True)
class Scaffold:
    root: Path
    template: str
    files: list[str]


def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name in ("__pycache__",) or child.name.endswith(".pyc"):
            continue
        name = _DOTTED.get(child.name, child.name)
        rel = f"{prefix}{name}"
        if child.is_dir():
            found += _walk(child, rel + "/")
        else:
            found.append((rel, child))
    return found


def template_files(template: str) -> list[tuple[str, Traversable]]:
    if template not in TEMPLATES:
        raise ConfigError(f"unknown template '{template}' (known: {', '.join(TEMPLATES)})")
    return _walk(resources.files("evalkit") / "templates" / template)


def init_suite(dest: Path, template: str = "blank") -> Scaffold:
    """Write the template into dest, which must be new or empty."""
    files = template_files(template)
    if dest.exists() and not dest.is_dir():
        raise RefusedError(f"{dest}: a file, not a folder; `evalkit init` writes into a new folder")
    blocker = blocking_file(dest)
    if blocker is not None:
        raise ConfigError(f"{dest}: {blocker} is a file, not a folder")
    if dest.exists() and any(dest.iterdir()):
        raise RefusedError(f"{dest}: not empty; `evalkit init` writes only into a new folder")
    make_folder(dest)
    try:
        for rel, source in files:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_template_bytes(rel, source))
            if rel.endswith(".sh") or "/bin/" in f"/{rel}":
                mode = target.stat().st_mode
                os.chmod(target, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    except OSError as exc:
        raise cannot_write(dest, exc) from None
    schemas = write_schemas(dest)
    return Scaffold(dest, template, [rel for rel, _ in files] + schemas)


def _template_bytes(rel: str, source: Traversable) -> bytes:
    """A template file as the new suite gets it: its `evalkit.yaml` opens with the line that
    points an editor at the schema written beside it (a comment, so no hash sees it)."""
    data = source.read_bytes()
    return (EDITOR_LINE + "\n").encode() + data if rel == CONFIG_NAME else data


FIXTURE_ROLES = {"project": "the project", "vault": "the notes vault"}
"""What a template's fixture folder stands for, as `init`'s next steps name it."""


def _fixtures_and_plugins(template: str) -> tuple[list[str], list[str]]:
    """The template's fixture folders (plugins aside) and its stand-in plugins, by name."""
    parts = [rel.split("/") for rel, _ in template_files(template) if rel.startswith("fixtures/")]
    plugins = sorted({p[2] for p in parts if p[1] == "plugins" and len(p) > 3})
    return sorted({p[1] for p in parts if p[1] != "plugins" and len(p) > 2}), plugins


def next_steps(folder: str, template: str = "blank") -> list[str]:
    """What `init` tells a newcomer to do, from the folder they ran it in and for the template
    they chose: evalkit finds the suite upward from where it runs, so the first step is to go
    there, and the second proves the suite offline before anything is edited."""
    fixtures, plugins = _fixtures_and_plugins(template)
    edit = " and ".join(
        f"fixtures/{name}/ ({FIXTURE_ROLES.get(name, 'a fixture')})" for name in fixtures
    )
    stand_ins = ", ".join(f"fixtures/plugins/{name}/" for name in plugins)
    return [
        "The scenarios' Tasks are public placeholders: rewrite every one before measuring.",
        f"1. cd {shlex.quote(folder)}: evalkit finds the suite from the folder it runs in.",
        "2. evalkit self-test: offline, with no model and no key, it proves the rules pass "
        "and fail as meant.",
        f"3. Edit {edit} into what your question needs, and the stand-in plugin {stand_ins} "
        "into the one under test.",
        "4. Write each scenario's Task (never paste one into a chat), its premise and its "
        "calibration; state the rules in evalkit.yaml or a scenario's expect.",
        "5. evalkit self-test, then evalkit calibrate --set all (the scripted model: still no "
        "key), until both are green.",
        "6. evalkit suite freeze, then measure: evalkit grid --models sonnet --reps 3.",
    ]

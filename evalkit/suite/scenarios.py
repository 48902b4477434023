"""Scenario files: YAML front matter, prose, and a held-out Task block this module never keeps."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from evalkit.errors import ConfigError
from evalkit.models import Scenario
from evalkit.scoring.hashing import sha256_bytes
from evalkit.suite.yamlio import load_text, validate

TASK_HEADING = re.compile(r"^##[ \t]+Task[ \t]*$", re.MULTILINE)
_FENCE = "---"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class ScenarioFile:
    """A loaded scenario. It holds the prose before the Task block and never the Task itself."""

    scenario: Scenario
    path: Path
    sha256: str
    prose: str

    @property
    def id(self) -> str:
        return self.scenario.id


def split_front_matter(text: str, path: Path) -> tuple[str, str, int]:
    """Return (front matter, body, line number where the body starts)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _FENCE:
        raise ConfigError(f"{path}:1: front matter: the file must start with a '---' line")
    for index in range(1, len(lines)):
        if lines[index].rstrip() == _FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
    raise ConfigError(f"{path}: front matter: no closing '---' line")


def _fast_scenario(front: str) -> Scenario | None:
    """Front matter through libyaml's C loader: a hundred times quicker than a round-trip
    parse. Anything it cannot take, the round-trip parser reads again, to name the line."""
    try:
        data = yaml.load(front, Loader=_LOADER)
        return Scenario.model_validate(data)
    except (yaml.YAMLError, ValidationError):
        return None


def parse_scenario(path: Path) -> ScenarioFile:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    text = raw.decode("utf-8", errors="replace")
    front, body, _ = split_front_matter(text, path)
    scenario = _fast_scenario(front)
    if scenario is None:
        data = load_text(front, path, first_line=2)
        scenario = validate(Scenario, data, path, first_line=2)
    match = TASK_HEADING.search(body)
    if match is None:
        raise ConfigError(f"{path}: Task: no '## Task' section")
    if not body[match.end() :].strip():
        raise ConfigError(f"{path}: Task: the '## Task' section is empty")
    if TASK_HEADING.search(body, match.end()):
        raise ConfigError(f"{path}: Task: more than one '## Task' section")
    if re.search(r"^##[ \t]+\S", body[match.end() :], re.MULTILINE):
        raise ConfigError(f"{path}: Task: the '## Task' section must be the last section")
    if path.stem != scenario.id:
        raise ConfigError(f"{path}: id: '{scenario.id}' does not match the file name")
    return ScenarioFile(scenario, path, sha256_bytes(raw), body[: match.start()])

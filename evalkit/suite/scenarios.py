"""Scenario files: YAML front matter, prose, and a held-out Task block this module never keeps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evalkit.errors import ConfigError
from evalkit.models import Scenario
from evalkit.models import ScenarioFile as ScenarioFile
from evalkit.scoring.hashing import sha256_bytes
from evalkit.suite.yamlio import LIBYAML, load_text, refuse_anchors, validate

TASK_HEADING = re.compile(r"^##[ \t]+Task[ \t]*$", re.MULTILINE)
HTML_COMMENT = re.compile(r"<!--.*?(-->|\Z)", re.DOTALL)
LEVEL_TAG = re.compile(r"-(L\d)(?:-|$)")
_FENCE = "---"


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
        data = yaml.load(front, Loader=LIBYAML)
        return Scenario.model_validate(data)
    except (yaml.YAMLError, ValidationError):
        return None


def decode_utf8(raw: bytes, path: Path) -> str:
    """The text of a file people keep; bytes that are not UTF-8 are named, not replaced."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None


def check_premise(sf: ScenarioFile, root: Path) -> None:
    """The premise names a suite file that exists and holds the marker."""
    premise = sf.scenario.premise
    target = root / premise.file
    if not target.is_file():
        raise ConfigError(f"{sf.path}: premise.file: {premise.file} does not exist in the suite")
    if premise.marker.encode("utf-8") not in target.read_bytes():
        raise ConfigError(f"{sf.path}: premise.marker: {premise.marker!r} is not in {premise.file}")


def read_front_matter(path: Path) -> Any:
    """A scenario's front matter as `parse_scenario` loads it (libyaml, else the round-trip
    parser) and nothing after it: for a check of the front matter alone, which must never
    hold the Task."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    front, _, _ = split_front_matter(decode_utf8(raw, path), path)
    refuse_anchors(front, path, first_line=2)
    try:
        return yaml.load(front, Loader=LIBYAML)
    except yaml.YAMLError:
        return load_text(front, path, first_line=2)


def parse_scenario(path: Path) -> ScenarioFile:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    text = decode_utf8(raw, path)
    front, body, _ = split_front_matter(text, path)
    refuse_anchors(front, path, first_line=2)
    scenario = _fast_scenario(front)
    if scenario is None:
        data = load_text(front, path, first_line=2)
        scenario = validate(Scenario, data, path, first_line=2)
    match = TASK_HEADING.search(body)
    if match is None:
        raise ConfigError(f"{path}: Task: no '## Task' section")
    if not HTML_COMMENT.sub("", body[match.end() :]).strip():
        raise ConfigError(f"{path}: Task: the '## Task' section is empty (comments aside)")
    if TASK_HEADING.search(body, match.end()):
        raise ConfigError(f"{path}: Task: more than one '## Task' section")
    if re.search(r"^##[ \t]+\S", body[match.end() :], re.MULTILINE):
        raise ConfigError(f"{path}: Task: the '## Task' section must be the last section")
    if path.stem != scenario.id:
        raise ConfigError(f"{path}: id: '{scenario.id}' does not match the file name")
    tag = LEVEL_TAG.search(scenario.id)
    if tag is not None and tag.group(1) != scenario.level:
        raise ConfigError(
            f"{path}: level: '{scenario.level}' contradicts the id's tag {tag.group(1)}"
        )
    return ScenarioFile(scenario, path, sha256_bytes(raw), body[: match.start()])

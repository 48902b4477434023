"""The JSON Schemas of what suite authors write: `evalkit.yaml` and a scenario's front matter.

An editor that reads them (the YAML language server, through the first line `evalkit init`
writes into `evalkit.yaml`) flags a typo while it is typed rather than when a command loads
the suite. They are generated from the very models evalkit validates with, so the editor and
evalkit cannot disagree about a field's name, type or allowed values. A few rules live in the
models' validators, where no field type can state them; `CONFIG_RULES` and `FRONT_RULES`
say them again in schema terms, and the differential test holds both sides to one answer.
What depends on more than the file (a premise file that must exist, an id that must match
the file's name, a ladder the suite declares) stays evalkit's alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.models import Scenario, SuiteConfig
from evalkit.models.base import NAME_PATTERN, RESERVED_VARIANTS
from evalkit.outpaths import cannot_write

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FOLDER = Path(".evalkit") / "schema"
CONFIG_SCHEMA = "evalkit.schema.json"
FRONT_MATTER_SCHEMA = "scenario.schema.json"
EDITOR_LINE = f"# yaml-language-server: $schema={SCHEMA_FOLDER.as_posix()}/{CONFIG_SCHEMA}"
"""The first line of the `evalkit.yaml` init writes: a comment, so no lock hash sees it."""

_PLAIN_RELATIVE = r"^(?!/)(?!(.*/)?\.\.(/|$))(?=.*[^/])"
"""A path a scenario leaves out: not absolute, no `..` component, not only slashes."""
_PLAIN_PARTS = r"(?!\.\.?(/|$))(?!.*/\.\.?(/|$))[^/]+(/[^/]+)*$"
"""Plain path components: none empty, `.` or `..`."""
_WORLD_PATH = {"pattern": f"^(~/|/){_PLAIN_PARTS}"}

CONFIG_RULES: dict[str, Any] = {
    "properties": {
        "variants": {
            "propertyNames": {
                "pattern": f"^{NAME_PATTERN}$",
                "not": {"enum": list(RESERVED_VARIANTS)},
            }
        },
        "observe": {"uniqueItems": True, "items": {"pattern": f"^{_PLAIN_PARTS}"}},
    },
    "$defs": {
        "WorldConfig": {
            "properties": {"project": _WORLD_PATH, "stores": {"additionalProperties": _WORLD_PATH}}
        }
    },
    "if": {"not": {"required": ["ladder"], "properties": {"ladder": {"const": False}}}},
    "then": {"properties": {"expected": {"propertyNames": {"enum": ["L1", "L2", "L3"]}}}},
}
"""What `SuiteConfig`'s validators refuse that its field types cannot say: a variant name
evalkit reserves or that is no name, a script observed twice or outside the project, a world
path that is not `~/…` or absolute and plain, a level off the ladder."""

FRONT_RULES: dict[str, Any] = {
    "properties": {"without": {"items": {"pattern": _PLAIN_RELATIVE}}},
    "anyOf": [
        {"required": ["level"], "properties": {"level": {"type": "string"}}},
        {"required": ["kind"], "properties": {"kind": {"type": "string"}}},
    ],
}
"""What every suite asks of a scenario beyond the model: a level (a ladder suite) or a kind
(any other), and paths it leaves out that stay inside the project."""


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra`'s keywords laid into `base`, object into object, so a rule adds to a field's
    generated schema rather than replacing it."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _schema(generated: dict[str, Any], file_name: str, title: str) -> dict[str, Any]:
    head = {"$schema": DRAFT, "$id": file_name, "title": title}
    return {**head, **{k: v for k, v in generated.items() if k != "title"}}


def config_schema() -> dict[str, Any]:
    """The schema of a suite's `evalkit.yaml`."""
    generated = _merged(SuiteConfig.model_json_schema(), CONFIG_RULES)
    generated.setdefault("description", "A suite's evalkit.yaml: what it measures with, and how.")
    return _schema(generated, CONFIG_SCHEMA, "evalkit.yaml")


def front_matter_schema() -> dict[str, Any]:
    """The schema of a scenario file's YAML front matter (never its Task, which is prose)."""
    generated = _merged(Scenario.model_json_schema(), FRONT_RULES)
    return _schema(generated, FRONT_MATTER_SCHEMA, "scenario front matter")


def schema_text(schema: dict[str, Any]) -> str:
    """One stable spelling, so a rewritten schema differs only where the models do."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(suite_dir: Path) -> list[str]:
    """Write both schemas into the suite's `.evalkit/schema/`; the suite-relative files."""
    folder = suite_dir / SCHEMA_FOLDER
    written = {CONFIG_SCHEMA: config_schema(), FRONT_MATTER_SCHEMA: front_matter_schema()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, schema in written.items():
            (folder / name).write_text(schema_text(schema), encoding="utf-8")
    except OSError as exc:
        raise cannot_write(folder, exc) from None
    return [(SCHEMA_FOLDER / name).as_posix() for name in written]

"""The editor's schemas and evalkit's own checks give one answer: every shipped suite's
`evalkit.yaml` and front matter satisfy them, and a fabricated file both refuse or both
accept. Front matter is read through the catalog's reader, which stops before the prose;
no Task is read here."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.models import Scenario, SuiteConfig
from evalkit.suite.catalog import CONFIG_NAME, Catalog
from evalkit.suite.scaffold import init_suite
from evalkit.suite.scenarios import read_front_matter
from evalkit.suite.schemas import (
    CONFIG_RULES,
    CONFIG_SCHEMA,
    DRAFT,
    FRONT_MATTER_SCHEMA,
    FRONT_RULES,
    config_schema,
    front_matter_schema,
)
from evalkit.suite.yamlio import load_text
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

SHIPPED = [REPO, *sorted(p.parent for p in (REPO / "suites").glob(f"*/{CONFIG_NAME}"))]
Edit = Callable[[dict[str, Any]], None]


def _ids(roots: list[Path]) -> list[str]:
    return [root.relative_to(REPO).as_posix() or "." for root in roots]


def _errors(schema: dict[str, Any], data: Any) -> list[str]:
    return sorted(e.json_path for e in jsonschema.Draft202012Validator(schema).iter_errors(data))


def test_both_schemas_are_draft_2020_12_and_name_their_file() -> None:
    pairs = ((config_schema(), CONFIG_SCHEMA), (front_matter_schema(), FRONT_MATTER_SCHEMA))
    for schema, name in pairs:
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == DRAFT and schema["$id"] == name and schema["title"]


def test_the_schemas_carry_the_models_field_descriptions() -> None:
    for model, schema in ((SuiteConfig, config_schema()), (Scenario, front_matter_schema())):
        fields = schema["properties"]
        described = {n: f.description for n, f in model.model_fields.items() if f.description}
        missing = [n for n, text in described.items() if fields[n].get("description") != text]
        assert described and missing == []


def test_the_added_rules_name_only_fields_the_models_have() -> None:
    generated = [SuiteConfig.model_json_schema(), Scenario.model_json_schema()]
    for rules, plain in zip((CONFIG_RULES, FRONT_RULES), generated, strict=True):
        assert set(rules.get("properties", {})) <= set(plain["properties"])
        for name, extra in rules.get("$defs", {}).items():
            assert set(extra["properties"]) <= set(plain["$defs"][name]["properties"])


@pytest.mark.parametrize("root", SHIPPED, ids=_ids(SHIPPED))
def test_every_shipped_config_satisfies_the_schema(root: Path) -> None:
    path = root / CONFIG_NAME
    assert _errors(config_schema(), load_text(path.read_text(encoding="utf-8"), path)) == []


@pytest.mark.parametrize("root", SHIPPED, ids=_ids(SHIPPED))
def test_every_shipped_front_matter_satisfies_the_schema(root: Path) -> None:
    schema = front_matter_schema()
    scenarios = Catalog(root).scenarios("all")
    wrong = {sf.id: _errors(schema, read_front_matter(sf.path)) for sf in scenarios}
    assert scenarios and {sid: paths for sid, paths in wrong.items() if paths} == {}


def _set(path: str, value: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value

    return edit


def _drop(path: str) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[key]
        del node[last]

    return edit


def _unchanged(data: dict[str, Any]) -> None:
    return None


def _both(*edits: Edit) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        for one in edits:
            one(data)

    return edit


FRONT_CASES: dict[str, tuple[Edit, str | None]] = {
    "as-written": (_unchanged, None),
    "launch-limits": (_set("launch", {"reps": 2, "timeout": 30.5, "tools": ["Read"]}), None),
    "leaves-a-path-out": (_set("without", ["docs/notes.md"]), None),
    "topic-a-list": (_set("topic", ["a", "b"]), "topic"),
    "reps-a-word": (_set("launch.reps", "many"), "launch.reps"),
    "reps-zero": (_set("launch.reps", 0), "launch.reps"),
    "unknown-key": (_set("tags", ["x"]), "tags"),
    "unknown-launch-key": (_set("launch.model", "x"), "launch.model"),
    "polarity-neutral": (_set("polarity", "neutral"), "polarity"),
    "level-L4": (_set("level", "L4"), "level"),
    "set-other": (_set("set", "holdout"), "set"),
    "kind-capitals": (_set("kind", "Big Kind"), "kind"),
    "no-level-nor-kind": (_both(_set("id", "P9-fabricated"), _drop("level")), "level"),
    "no-premise": (_drop("premise"), "premise"),
    "no-premise-marker": (_drop("premise.marker"), "premise.marker"),
    "no-topic": (_drop("topic"), "topic"),
    "without-leaves": (_set("without", ["../up"]), "without"),
    "without-absolute": (_set("without", ["/etc"]), "without"),
}
"""name -> (the edit of a template scenario's front matter, the field evalkit must name;
None: both accept)."""


@pytest.fixture(scope="module")
def template_front(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = init_suite(tmp_path_factory.mktemp("template") / "s", "blank").root
    data = read_front_matter(Catalog(root).scenarios("run")[0].path)
    assert isinstance(data, dict)
    return {**data, "id": "P9-L1-fabricated"}


def _fabricated_scenario(root: Path, front: dict[str, Any]) -> Path:
    path = root / "scenarios" / f"{front['id']}.md"
    body = "\n## Premise\n\nFabricated.\n\n## Task\n\nFabricated for the schema's test.\n"
    path.write_text(f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body}", encoding="utf-8")
    return path


def _evalkit(root: Path, command: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, ["--suite", str(root), command], env={"COLUMNS": "200"})
    return result.exit_code, result.stderr.strip().splitlines()


@pytest.mark.parametrize("case", FRONT_CASES)
def test_the_schema_and_evalkit_list_agree_on_front_matter(
    tmp_path: Path, template_front: dict[str, Any], case: str
) -> None:
    edit, field = FRONT_CASES[case]
    front = copy.deepcopy(template_front)
    edit(front)
    root = init_suite(tmp_path / "s", "blank").root
    path = _fabricated_scenario(root, front)
    schema_accepts = not _errors(front_matter_schema(), front)
    code, err = _evalkit(root, "list")
    assert (case, schema_accepts, code == 0) == (case, field is None, field is None)
    if field is not None:
        named = len(err) == 1 and f"{path}:" in err[0] and f": {field}:" in err[0]
        assert (case, len(err), named) == (case, 1, True)


def test_self_test_names_a_bad_front_matter_in_one_line(
    tmp_path: Path, template_front: dict[str, Any]
) -> None:
    root = init_suite(tmp_path / "s", "blank").root
    path = _fabricated_scenario(root, {**template_front, "polarity": "neutral"})
    code, err = _evalkit(root, "self-test")
    named = len(err) == 1 and f"{path}:" in err[0] and ": polarity:" in err[0]
    assert (code != 0, len(err), named) == (True, 1, True)


CONFIG_CASES: dict[str, tuple[Edit, str | None]] = {
    "as-written": (_unchanged, None),
    "a-variant": (_set("variants", {"terse": {"description": "shorter"}}), None),
    "gate-settings": (_set("gate", {"alpha": 0.05, "margin": 0.1}), None),
    "world-store": (_set("world.stores", {"vault": "~/Notes"}), None),
    "an-agent-pin": (_set("agents", {"claude": "2.1.327"}), None),
    "agent-pin-not-a-version": (_set("agents", {"claude": "latest"}), "agents.claude"),
    "agent-pin-of-no-agent": (_set("agents", {"cursor": "1.0.0"}), "agents"),
    "unknown-key": (_set("checkers", {}), "checkers"),
    "plugins-a-string": (_set("plugins", "fixtures/plugins/my-plugin"), "plugins"),
    "ladder-a-list": (_set("ladder", [1]), "ladder"),
    "no-checker": (_drop("checker"), "checker"),
    "no-name": (_drop("name"), "name"),
    "reserved-variant": (_set("variants", {"none": {}}), "variants"),
    "variant-not-a-name": (_set("variants", {"a b": {}}), "variants"),
    "observed-twice": (_set("observe", ["bin/test", "bin/test"]), "observe"),
    "observed-outside": (_set("observe", ["../x"]), "observe"),
    "world-project-relative": (_set("world.project", "src/app"), "world.project"),
    "world-store-up": (_set("world.stores", {"vault": "~/../x"}), "world.stores"),
    "world-uid-root": (_set("world.uid", 0), "world.uid"),
    "level-off-the-ladder": (_set("expected", {"L9": {"positive": 0.5}}), "expected"),
    "bar-above-one": (_set("expected", {"L1": {"positive": 1.5}}), "expected.L1"),
}
"""name -> (the edit of the blank template's evalkit.yaml, the field evalkit must name;
None: both accept)."""


@pytest.mark.parametrize("case", CONFIG_CASES)
def test_the_schema_and_evalkit_list_agree_on_the_config(tmp_path: Path, case: str) -> None:
    edit, field = CONFIG_CASES[case]
    root = init_suite(tmp_path / "s", "blank").root
    path = root / CONFIG_NAME
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(config)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    schema_accepts = not _errors(config_schema(), config)
    code, err = _evalkit(root, "list")
    assert (case, schema_accepts, code == 0) == (case, field is None, field is None)
    if field is not None:
        named = bool(err) and f"{path}" in err[0] and field in err[0]
        assert (case, named) == (case, True)

"""What a suite holds, read without its checker: its config and its two scenario sets.

`evalkit list` needs no more than this, so it never loads the checker registry (entry
points) or a checker's package. `Suite` builds on it and adds the checker, its options and
the checker-specific fields of each scenario.
"""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Literal

from evalkit.errors import ConfigError, NotFoundError
from evalkit.models import SuiteConfig
from evalkit.suite.scenarios import ScenarioFile, check_premise, parse_scenario
from evalkit.suite.yamlio import load_file, quick_load_file

CONFIG_NAME = "evalkit.yaml"
SET_FOLDERS = {"run": "scenarios", "reserve": "scenarios-reserve"}
Which = Literal["run", "reserve", "all"]


def plugin_manifest_name(folder: Path, where: str) -> str:
    """The name a plugin folder's .claude-plugin/plugin.json gives, or a ConfigError: a
    manifest that is missing, does not parse or names nothing makes the CLI run without it."""
    manifest = folder / ".claude-plugin" / "plugin.json"
    if not manifest.is_file():
        raise ConfigError(
            f"{where}: {folder} is not a plugin folder (no .claude-plugin/plugin.json); "
            "the CLI would silently run without it"
        )
    try:
        data = json.loads(manifest.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{manifest}: not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{manifest}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{manifest}: (top level): must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{manifest}: name: missing or not a non-empty string")
    return name


def find_suite_root(explicit: str | Path | None = None, start: Path | None = None) -> Path:
    """--suite, then EVALKIT_SUITE, then the nearest folder upward holding evalkit.yaml."""
    chosen = explicit or os.environ.get("EVALKIT_SUITE")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        if not (root / CONFIG_NAME).is_file():
            from evalkit.suite.plugin_evals import suite_root_for

            translated = suite_root_for(root) if root.is_dir() else None
            if translated is None:
                raise ConfigError(f"{root}: no {CONFIG_NAME} in the suite folder")
            return translated
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    raise ConfigError(
        f"no {CONFIG_NAME} in {here} or any folder above it; give --suite or set EVALKIT_SUITE"
    )


class Catalog:
    """A suite's config and scenarios, each checked as far as it can be without the checker:
    a malformed config or scenario is refused here, in one line naming file and field."""

    def __init__(self, root: Path, config: SuiteConfig | None = None) -> None:
        self.root = root
        self.config_path = root / CONFIG_NAME
        self.config = config or load_file(SuiteConfig, self.config_path)
        self._check_judge()
        self._check_plugins()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def rubric_path(self) -> Path:
        return self.root / self.config.judge.rubric

    def plugin_dirs(self) -> list[Path]:
        return [(self.root / p).resolve() for p in self.config.plugins]

    @cached_property
    def _scenarios(self) -> dict[str, list[ScenarioFile]]:
        loaded: dict[str, list[ScenarioFile]] = {}
        seen: dict[str, Path] = {}
        for which, folder in SET_FOLDERS.items():
            order = _ladder_order if self.config.ladder else _by_name
            files = sorted((self.root / folder).glob("*.md"), key=order)
            loaded[which] = []
            for path in files:
                sf = parse_scenario(path)
                if sf.scenario.set != which:
                    raise ConfigError(
                        f"{path}: set: '{sf.scenario.set}' but the file is in {folder}/"
                    )
                if sf.id in seen:
                    raise ConfigError(f"{path}: id: '{sf.id}' is also used by {seen[sf.id]}")
                seen[sf.id] = path
                self._check_scenario(sf)
                loaded[which].append(sf)
        return loaded

    def _check_scenario(self, sf: ScenarioFile) -> None:
        """What a scenario must satisfy in this suite, beyond its own file."""
        self._validate_shape(sf)
        check_premise(sf, self.root)

    def _check_judge(self) -> None:
        """A suite that declares a judge must ship its rubrics; one without needs none."""
        if "judge" in self.config.model_fields_set and not self.rubric_path.is_file():
            raise ConfigError(
                f"{self.config_path}: judge.rubric: {self.config.judge.rubric} does not exist"
            )
        for name, rel in self.config.judge.rubrics.items():
            if not (self.root / rel).is_file():
                raise ConfigError(f"{self.config_path}: judge.rubrics.{name}: {rel} does not exist")

    def rubric_file(self, name: str | None = None) -> Path:
        """The judge's rubric, or the further one `judge.rubrics` names `name`."""
        if name is None:
            return self.rubric_path
        rel = self.config.judge.rubrics.get(name)
        if rel is None:
            raise ConfigError(f"{self.config_path}: judge.rubrics: no rubric named '{name}'")
        return self.root / rel

    def _check_plugins(self) -> None:
        """Each plugin folder carries a plugin.json that parses and names the plugin: the CLI
        would otherwise run without the plugin, silently."""
        for index, path in enumerate(self.plugin_dirs()):
            plugin_manifest_name(path, f"{self.config_path}: plugins[{index}]")

    def _validate_shape(self, sf: ScenarioFile) -> None:
        """A ladder suite's scenarios each sit on a level; any other suite's each name a kind."""
        s = sf.scenario
        if self.config.ladder and s.level is None:
            raise ConfigError(f"{sf.path}: level: required, the suite sits on a ladder")
        if not self.config.ladder and s.kind is None:
            raise ConfigError(f"{sf.path}: kind: required, the suite declares no ladder")
        for rel in s.without:
            if rel.startswith("/") or ".." in rel.split("/") or not rel.strip("/"):
                raise ConfigError(f"{sf.path}: without: '{rel}' is not a project-relative path")

    def scenarios(self, which: Which = "run") -> list[ScenarioFile]:
        if which == "all":
            return self._scenarios["run"] + self._scenarios["reserve"]
        return list(self._scenarios[which])

    def resolve(self, ref: str, which: Which = "all") -> ScenarioFile:
        """A full id, or a unique prefix such as P1; errors list the candidates."""
        pool = self.scenarios(which)
        exact = [s for s in pool if s.id == ref]
        if exact:
            return exact[0]
        matches = [s for s in pool if s.id.startswith(ref + "-") or s.id.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        ids = ", ".join(s.id for s in (matches or pool))
        if matches:
            raise ConfigError(f"scenario '{ref}' is ambiguous: {ids}")
        raise NotFoundError(f"no scenario '{ref}' in the {which} set; known: {ids}")


def load_catalog(explicit: str | Path | None = None, start: Path | None = None) -> Catalog:
    """The catalog with its config read quickly: it reads no field where YAML 1.1 and 1.2
    differ (the checker's options are the suite's business)."""
    root = find_suite_root(explicit, start)
    return Catalog(root, quick_load_file(SuiteConfig, root / CONFIG_NAME))


def _ladder_order(path: Path) -> tuple[str, int, str]:
    """P1, N1, P2, N2 …: the ladder's pairs side by side."""
    name = path.stem
    return (name[1:], 0 if name.startswith("P") else 1, name)


def _by_name(path: Path) -> str:
    return path.stem

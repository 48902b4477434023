"""Finding and loading a suite: its config, its two scenario sets, its checker."""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from evalkit.checkers import checker_class, reference_for
from evalkit.errors import ConfigError, NotFoundError
from evalkit.models import SuiteConfig
from evalkit.scoring.checker import Checker
from evalkit.scoring.hashing import tree_hash
from evalkit.suite.build import canonical_hash, ensure_built, outputs, tool_version
from evalkit.suite.scenarios import ScenarioFile, check_premise, parse_scenario
from evalkit.suite.yamlio import describe, load_file

if TYPE_CHECKING:
    from evalkit.reference.behaviour import CheckerReference

CONFIG_NAME = "evalkit.yaml"
SET_FOLDERS = {"run": "scenarios", "reserve": "scenarios-reserve"}
Which = Literal["run", "reserve", "all"]


def find_suite_root(explicit: str | Path | None = None, start: Path | None = None) -> Path:
    """--suite, then EVALKIT_SUITE, then the nearest folder upward holding evalkit.yaml."""
    chosen = explicit or os.environ.get("EVALKIT_SUITE")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        if not (root / CONFIG_NAME).is_file():
            raise ConfigError(f"{root}: no {CONFIG_NAME} in the suite folder")
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    raise ConfigError(
        f"no {CONFIG_NAME} in {here} or any folder above it; give --suite or set EVALKIT_SUITE"
    )


class Suite:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config_path = root / CONFIG_NAME
        self.config = load_file(SuiteConfig, self.config_path)
        cls = checker_class(self.config.checker.name, str(self.config_path))
        try:
            options = cls.options_model.model_validate(self.config.checker.options)
        except ValidationError as exc:
            raise ConfigError(
                describe(
                    exc, self.config.checker.options, self.config_path, prefix="checker.options"
                )
            ) from None
        self.checker: Checker = cls(options)
        self._check_judge()
        self._check_plugins()
        self._fixture_hashes: dict[str, str] | None = None
        self._plugin_hashes: dict[str, str] | None = None
        self._built = False

    @cached_property
    def reference(self) -> CheckerReference[Checker]:
        """The checker's reference behaviour: policies, calibration, self-test cases."""
        return reference_for(self.checker)

    @cached_property
    def lock_state(self) -> str:
        """'frozen', 'no-lock' or 'drifted', worked out once per command."""
        from evalkit.suite.lock import lock_state

        return lock_state(self)

    @property
    def name(self) -> str:
        return self.config.name

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
                self._validate_shape(sf)
                check_premise(sf, self.root)
                self._validate_checker_fields(sf)
                loaded[which].append(sf)
        return loaded

    def _check_judge(self) -> None:
        """A suite that declares a judge must ship its rubric; one without needs none."""
        if "judge" in self.config.model_fields_set and not self.rubric_path.is_file():
            raise ConfigError(
                f"{self.config_path}: judge.rubric: {self.config.judge.rubric} does not exist"
            )

    def _check_plugins(self) -> None:
        """Each plugin folder carries a plugin.json that parses and names the plugin: the CLI
        would otherwise run without the plugin, silently."""
        for index, path in enumerate(self.plugin_dirs()):
            manifest = path / ".claude-plugin" / "plugin.json"
            where = f"{self.config_path}: plugins[{index}]"
            if not manifest.is_file():
                raise ConfigError(f"{where}: {path} has no .claude-plugin/plugin.json")
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

    def _validate_checker_fields(self, sf: ScenarioFile) -> None:
        for field, getter in (
            ("expect", self.checker.expect_for),
            ("calibration", self.reference.calibration_for),
        ):
            try:
                getter(sf)
            except ValidationError as exc:
                data = getattr(sf.scenario, field)
                raise ConfigError(describe(exc, data, sf.path, prefix=field)) from None

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

    def ensure_built(self, force: bool = False) -> list[str]:
        """Build the suite's built fixture files when missing or stale, once per command."""
        if self._built and not force:
            return []
        project = self.root / self.config.fixtures.project
        rebuilt = ensure_built(self.root, project, self.config.build, force)
        self._built = True
        return rebuilt

    def built_hashes(self) -> dict[str, str]:
        """Lock entries of each built output: its canonical hash and the tool's version."""
        self.ensure_built()
        project = self.root / self.config.fixtures.project
        hashes: dict[str, str] = {}
        for step in self.config.build:
            hashes[f"built:{step.name}"] = canonical_hash(step, project / step.output)
            hashes[f"built:{step.name}:tool"] = tool_version(step, project) or "unknown"
        return hashes

    def fixture_dirs(self) -> dict[str, Path]:
        """project first, then each extra fixture, by its sandbox name."""
        dirs = {"project": self.root / self.config.fixtures.project}
        for name, rel in self.config.fixtures.extra.items():
            if name in ("project", "sandbox") or "/" in name:
                raise ConfigError(f"{self.config_path}: fixtures.extra.{name}: reserved name")
            dirs[name] = self.root / rel
        for name, path in dirs.items():
            if not path.is_dir():
                raise ConfigError(f"{self.config_path}: fixtures.{name}: {path} is not a folder")
        return dirs

    def plugin_dirs(self) -> list[Path]:
        return [(self.root / p).resolve() for p in self.config.plugins]

    def plugin_hashes(self) -> dict[str, str]:
        """Suite-relative plugin path -> content hash, once per command like the fixtures."""
        if self._plugin_hashes is None:
            self._plugin_hashes = {
                relative_path(p, self.root): tree_hash(p) for p in self.plugin_dirs()
            }
        return dict(self._plugin_hashes)

    @property
    def rubric_path(self) -> Path:
        return self.root / self.config.judge.rubric

    def fixture_hashes(self) -> dict[str, str]:
        """Hashed once per command: reps of one run share the fixtures they were built from,
        and a later command (verify) hashes them afresh and sees any drift. Subject files
        inside a fixture (a CLAUDE.md under test) are left out: they are wording, not
        instrument."""
        if self._fixture_hashes is None:
            self.ensure_built()
            built = outputs(self.config.build)
            from evalkit.suite.subject import fixture_subject_paths, instrument_tree_hash

            inside = fixture_subject_paths(self)
            self._fixture_hashes = {
                n: instrument_tree_hash(p, inside[n] + sorted(built if n == "project" else ()))
                if inside.get(n)
                else tree_hash(p, built if n == "project" else frozenset())
                for n, p in self.fixture_dirs().items()
            }
            project = self.root / self.config.fixtures.project
            for step in self.config.build:
                key = f"project/{step.output.strip('/')}"
                self._fixture_hashes[key] = canonical_hash(step, project / step.output)
        return dict(self._fixture_hashes)


def load_suite(explicit: str | Path | None = None, start: Path | None = None) -> Suite:
    return Suite(find_suite_root(explicit, start))


def _ladder_order(path: Path) -> tuple[str, int, str]:
    """P1, N1, P2, N2 …: the ladder's pairs side by side."""
    name = path.stem
    return (name[1:], 0 if name.startswith("P") else 1, name)


def _by_name(path: Path) -> str:
    return path.stem


def relative_path(path: Path, root: Path) -> str:
    """path relative to root where it lies under it (as kept in manifests), else absolute."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())

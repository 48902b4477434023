"""Loading a suite: its catalog (config and scenario sets) and the checker it names."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from evalkit.checkers import checker_class, reference_for
from evalkit.errors import ConfigError
from evalkit.scoring.checker import Checker
from evalkit.scoring.fsdiff import FolderFiles, read_files
from evalkit.scoring.hashing import tree_hash
from evalkit.scoring.instrument import Instrument
from evalkit.scoring.skills import Skills
from evalkit.suite.build import canonical_hash, ensure_built, outputs, tool_version
from evalkit.suite.catalog import (
    CONFIG_NAME,
    SET_FOLDERS,
    Catalog,
    Which,
    find_suite_root,
)
from evalkit.suite.scenarios import ScenarioFile, decode_utf8
from evalkit.suite.yamlio import describe

if TYPE_CHECKING:
    from evalkit.checkers.behaviour import CheckerReference

__all__ = ["CONFIG_NAME", "SET_FOLDERS", "Suite", "Which", "find_suite_root", "load_suite"]


class Suite(Catalog):
    """A catalog with its checker: what every command that scores or runs needs."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
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
        self._fixture_hashes: dict[str, str] | None = None
        self._plugin_hashes: dict[str, str] | None = None
        self._fixture_files: dict[str, FolderFiles] = {}
        self._baseline_files: dict[Path, FolderFiles] = {}
        self._built = False

    @cached_property
    def neighbours(self) -> list[Path]:
        """The neighbours' plugin folders, checked once per command."""
        from evalkit.suite.neighbours import neighbour_dirs

        return neighbour_dirs(self.root, self.config, str(self.config_path))

    @cached_property
    def skills(self) -> Skills | None:
        """The subject's skills and its neighbours', for scoring (None: no neighbours)."""
        from evalkit.suite.neighbours import suite_skills

        return suite_skills(self.root, self.config, str(self.config_path))

    @cached_property
    def reference(self) -> CheckerReference[Checker]:
        """The checker's reference behaviour: policies, calibration, self-test cases."""
        return reference_for(self.checker)

    @cached_property
    def lock_state(self) -> str:
        """'frozen', 'no-lock' or 'drifted', worked out once per command."""
        from evalkit.suite.lock import lock_state

        return lock_state(self)

    def _check_scenario(self, sf: ScenarioFile) -> None:
        super()._check_scenario(sf)
        self._validate_checker_fields(sf)
        self._check_wanted(sf)

    def _check_wanted(self, sf: ScenarioFile) -> None:
        """A `wanted:` that names no neighbour's skill would never match a firing: its
        misroute and its activation row would be silently empty, so it is refused."""
        wanted = sf.scenario.wanted
        if wanted is None:
            return
        known = self.skills.neighbours if self.skills is not None else ()
        if wanted not in known:
            shown = ", ".join(known) if known else "none: the suite declares no neighbours"
            raise ConfigError(
                f"{sf.path}: wanted: {wanted} is not a neighbour's skill (known: {shown})"
            )

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

    def fixture_files(self, name: str) -> FolderFiles:
        """A fixture's files read once per command, like its hash: every rep a checker
        compares with the fixture is compared with the same bytes, without reading them again."""
        if name not in self._fixture_files:
            self.ensure_built()
            self._fixture_files[name] = read_files(self.fixture_dirs()[name])
        return self._fixture_files[name]

    def baseline_files(self, name: str, folder: Path) -> FolderFiles:
        """A fixture's files as a rep found them, read once per command: the fixture's own, or
        `folder`, the fixture with a subject laid over it (see suite/subject.py)."""
        if folder == self.fixture_dirs()[name]:
            return self.fixture_files(name)
        if folder not in self._baseline_files:
            self._baseline_files[folder] = read_files(folder)
        return self._baseline_files[folder]

    def instrument(
        self, scenario: ScenarioFile, fixtures: Mapping[str, Path] | None = None
    ) -> Instrument:
        """All a verdict of `scenario` may read of the suite. `fixtures` are the fixtures as
        the agent found them (with the subject applied), the suite's own where None."""
        found = {n: (fixtures or {}).get(n, folder) for n, folder in self.fixture_dirs().items()}
        return Instrument(
            scenario=scenario,
            checker=self.checker,
            required_hooks=tuple(self.config.required_hooks),
            observe=tuple(self.config.observe),
            fixtures=found,
            fixture_files={n: self.baseline_files(n, p) for n, p in found.items()},
            rubric=self._rubrics.get(None),
            rubrics={n: t for n, t in self._rubrics.items() if n is not None},
            skills=self.skills,
        )

    @cached_property
    def _rubrics(self) -> dict[str | None, str]:
        """The judge's rubrics read once per command, like the fixtures (None: its own)."""
        paths: dict[str | None, Path] = {None: self.rubric_path}
        paths.update({n: self.rubric_file(n) for n in self.config.judge.rubrics})
        return {n: decode_utf8(p.read_bytes(), p) for n, p in paths.items() if p.is_file()}

    def plugin_hashes(self) -> dict[str, str]:
        """Suite-relative plugin path -> content hash, once per command like the fixtures."""
        if self._plugin_hashes is None:
            self._plugin_hashes = {
                relative_path(p, self.root): tree_hash(p) for p in self.plugin_dirs()
            }
        return dict(self._plugin_hashes)

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


def relative_path(path: Path, root: Path) -> str:
    """path relative to root where it lies under it (as kept in manifests), else absolute."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())

"""What a suite's `evalkit.yaml` says: the shapes its authors write, strict about typos."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from evalkit.models.base import NAME_PATTERN, RESERVED_VARIANTS, Strict, is_name


class FixturesConfig(Strict):
    project: str = Field(
        "fixtures/project", description="copied to <sandbox>/project and git-inited"
    )
    extra: dict[str, str] = Field(
        default_factory=dict,
        description="name -> folder; each copied pristine to <sandbox>/<name>, without .git",
    )


class RequiredHook(Strict):
    event: str = Field(description="hook_event of the hook_response, e.g. SessionStart")
    output_contains: str = Field("", description="text the hook's output must contain")
    agents: list[Literal["claude", "codex", "gemini"]] | None = Field(
        None,
        description="the agents whose reps it is required of; every agent when absent. A rep "
        "of an agent it applies to that cannot run its event is an ERROR",
    )


class CheckerConfig(Strict):
    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class JudgeConfig(Strict):
    rubric: str = "judge-rubric.md"
    rubrics: dict[str, str] = Field(
        default_factory=dict,
        description="name -> suite-relative file: further frozen rubrics, each asked by the "
        "checker option that names it",
    )
    model: str = "haiku"
    command_env: list[str] = Field(
        default_factory=lambda: ["EVALKIT_JUDGE_CMD"],
        description="environment variables, first set wins, holding a shell command judge",
    )


class BuildStep(Strict):
    """A fixture file that is built, not committed: rebuilt when missing or stale."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="names it in the lock")
    output: str = Field(description="project-relative folder the command writes")
    command: list[str] = Field(
        min_length=1,
        description="argv run from the suite folder; {project} is the project fixture; the "
        "tool is looked up beside evalkit's own Python first, then on PATH",
    )
    version: list[str] = Field(
        default_factory=list, description="argv printing the tool's version, kept in the lock"
    )
    keep: list[str] = Field(
        default_factory=list, description="files of output to keep; the rest is pruned"
    )
    canonical: Literal["files", "graphify-graph"] = Field(
        "files",
        description="how the output is hashed: its files' bytes, or a graphify graph's "
        "nodes and links (it stamps the HEAD commit and the date, which are not the graph)",
    )


class VariantConfig(Strict):
    overlay: str | None = Field(
        None,
        description="suite-relative folder; each file in it replaces or adds the subject file "
        "at the same suite-relative path (e.g. fixtures/plugins/os-vault/skills/write/SKILL.md); "
        "none: the suite's own wording under this name",
    )
    description: str = ""


Rate01 = Annotated[float, Field(ge=0, le=1)]


class Bounds(Strict):
    """A hypothesised range: at least `min`, at most `max` (either may be left open)."""

    min: float | None = Field(None, ge=0, le=1)
    max: float | None = Field(None, ge=0, le=1)


class TierBar(Strict):
    """A model tier's own bars at one level, in place of the level's general ones."""

    positive: Rate01 | Bounds | None = Field(None, description="recall: a minimum, or min/max")
    negative: Rate01 | Bounds | None = Field(None, description="specificity: a minimum, or min/max")


class ExpectedBar(TierBar):
    """A hypothesised pass rate, stated before the grid is run: a number is a minimum; `min`
    and `max` state a range ("haiku may over-trigger at L3": `negative: {max: 0.6}`)."""

    models: dict[str, TierBar] = Field(
        default_factory=dict,
        description="model tier (sonnet, haiku, or any model name) -> its own bars; a tier "
        "names every model it is part of (haiku: claude-haiku-4-5)",
    )

    def for_model(self, model: str, polarity: str) -> tuple[float | None, float | None]:
        """(min, max) for one model's cells of one polarity: the tier's when it states one."""
        chosen: float | Bounds | None = getattr(self, polarity)
        for tier, bar in self.models.items():
            if (tier == model or tier in model) and getattr(bar, polarity) is not None:
                chosen = getattr(bar, polarity)
                break
        if isinstance(chosen, Bounds):
            return chosen.min, chosen.max
        return chosen, None


class GateConfig(Strict):
    """`evalkit gate`'s settings, stated before a grid like the bars; frozen with the config."""

    alpha: float | None = Field(None, gt=0, lt=1, description="family-wise level (Holm)")
    margin: float | None = Field(
        None, ge=0, lt=1, description="non-inferiority margin on recall and specificity"
    )
    max_errors: float | None = Field(
        None, ge=0, le=1, description="largest share of ERROR rows a side may hold"
    )
    min_delta: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="the floor on 'better': `gate --superiority` passes only B - A > D shown",
    )


USER_PATTERN = r"^[a-z][a-z0-9_-]{0,30}$"
HOST_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"


class HistoryCommit(Strict):
    """One commit of the project's history as the agent finds it in `git log`."""

    message: str = Field(min_length=1, description="the commit message, as a person wrote it")
    days_before: int = Field(
        0, ge=0, le=3650, description="days before the grid's start the commit was made"
    )
    paths: list[str] = Field(
        default_factory=list,
        description="project-relative files or folders this commit adds; empty: all the rest "
        "(the last commit always takes what no commit named)",
    )


def _default_history() -> list[HistoryCommit]:
    return [HistoryCommit(message="Initial commit", days_before=3)]


class WorldConfig(Strict):
    """The machine the agent believes it is on: a user, a home and where the rep's folders
    sit in it. Nothing in it may name the measurement; part of the frozen instrument."""

    user: str = Field("alex", pattern=USER_PATTERN, description="the login name")
    full_name: str = Field("Alex Morgan", min_length=1, description="git author, .gitconfig")
    email: str = Field("alex.morgan@fastmail.com", pattern=r"^[^@\s]+@[^@\s]+$")
    uid: int = Field(1000, ge=1, le=60000, description="a non-root uid")
    gid: int = Field(1000, ge=1, le=60000, description="a non-root gid")
    hostname: str = Field("alex-laptop", pattern=HOST_PATTERN)
    project: str = Field(
        "~/src/app", description="where the project appears; `~` is the world's home"
    )
    stores: dict[str, str] = Field(
        default_factory=dict,
        description="extra fixture name -> where it appears (`~/Notes`); default `~/<name>`",
    )
    markers: list[str] = Field(
        default_factory=list, description="further words that would name the measurement"
    )
    ordinary: list[str] = Field(
        default_factory=list,
        description="marker words the suite's own project uses in their ordinary sense (a "
        "retry policy); never a scenario id or code, nor evalkit",
    )
    history: list[HistoryCommit] = Field(
        default_factory=_default_history,
        min_length=1,
        description="the project's commits, oldest first",
    )

    @property
    def home(self) -> str:
        return f"/home/{self.user}"

    @field_validator("project")
    @classmethod
    def _project_path(cls, path: str) -> str:
        return _world_path(path, "project")

    @field_validator("stores")
    @classmethod
    def _store_paths(cls, stores: dict[str, str]) -> dict[str, str]:
        return {name: _world_path(path, f"stores.{name}") for name, path in stores.items()}


def _world_path(path: str, field: str) -> str:
    """A world path is `~/...` or absolute, plain (no `.` or `..`), and never the home itself."""
    rest = path[2:] if path.startswith("~/") else path[1:] if path.startswith("/") else None
    parts = (rest or "").split("/")
    if rest is None or not rest or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{field}: {path!r} must be `~/<path>` or an absolute plain path")
    return path


class NeighbourConfig(Strict):
    """A plugin installed beside the subject in every rep, as a user's machine has others:
    a subject that only wins in a room of its own has not been measured among its peers."""

    path: str | None = Field(
        None,
        min_length=1,
        description="a plugin folder (.claude-plugin/plugin.json, skills/), relative to the "
        "suite; loaded as the subject is, in every arm, the no-plugin arm included",
    )
    stock: Literal["jot", "readme-keeper", "commit-scribe", "check-runner"] | None = Field(
        None,
        description="one of evalkit's own neighbours instead of a path: jot (scratch notes "
        "kept outside the project), readme-keeper (docs), commit-scribe (commit messages), "
        "check-runner (runs the tests)",
    )
    covers: str = Field(min_length=1, description="what it is for, in a user's words (the page)")

    @model_validator(mode="after")
    def _one_source(self) -> NeighbourConfig:
        if (self.path is None) == (self.stock is None):
            raise ValueError("give a neighbour either path or stock, not both")
        return self


CliVersion = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")]
"""A CLI version as npm names it: MAJOR.MINOR.PATCH, a pre-release after a `-`."""


class SuiteConfig(Strict):
    name: str
    description: str = ""
    fixtures: FixturesConfig = Field(default_factory=FixturesConfig)
    plugins: list[str] = Field(default_factory=list)
    environment: dict[str, str] = Field(
        default_factory=dict,
        description="isolation environment for every rep; {sandbox}, {project} and each "
        "extra fixture name expand to absolute sandbox paths",
    )
    required_hooks: list[RequiredHook] = Field(default_factory=list)
    checker: CheckerConfig
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    ladder: bool = Field(
        True, description="scenarios sit on the L1-L3 ladder; false: each names its kind"
    )
    build: list[BuildStep] = Field(
        default_factory=list, description="built fixture files, in order"
    )
    subject: list[str] | None = Field(
        None,
        description="suite-relative folders or files that are the wording under test (plugin "
        "folders, a fixture's CLAUDE.md); never frozen, hashed on every row. Default: plugins",
    )
    variants: dict[str, VariantConfig] = Field(
        default_factory=dict,
        description=f"name ({NAME_PATTERN}; not {' or '.join(RESERVED_VARIANTS)}) -> files "
        "overlaid onto the subject",
    )
    agents: dict[Literal["claude", "codex", "gemini"], CliVersion] = Field(
        default_factory=dict,
        description="agent -> the version of its CLI `run` and `grid` use when no --cli is "
        "given (one other than evalkit's own pin is installed into the version cache as "
        "--cli installs it); `watch --bump` edits it. Outside the frozen instrument, like "
        "variants: every row records its CLI version",
    )
    observe: list[str] = Field(
        default_factory=list,
        description="project-relative scripts each rep runs through a wrapper that records "
        "every run (rules: `ran`); part of the frozen instrument",
    )
    expected: dict[str, ExpectedBar] = Field(
        default_factory=dict,
        description="level (L1, L2, L3; a kind where there is no ladder) -> hypothesised pass "
        "bars, stated before the grid; part of the frozen instrument",
    )
    gate: GateConfig = Field(default_factory=GateConfig)
    world: WorldConfig = Field(
        default_factory=WorldConfig,
        description="the user, home and places the agent's folders appear at: part of the "
        "frozen instrument",
    )
    neighbours: list[NeighbourConfig] = Field(
        default_factory=list,
        description="plugins installed beside the subject in every rep of every arm; part of "
        "the frozen instrument (each folder hashed into the lock)",
    )
    mcp_mocks: str | None = Field(
        None,
        description="suite-relative JSON of fixed MCP servers ({server: {tools, answers}}) "
        "each Claude Code rep is given, and no other MCP server; part of the instrument",
    )

    @field_validator("variants")
    @classmethod
    def _variant_names(cls, variants: dict[str, VariantConfig]) -> dict[str, VariantConfig]:
        for name in variants:
            if name in RESERVED_VARIANTS:
                raise ValueError(f"'{name}' is a name evalkit reserves; choose another")
            if not is_name(name):
                raise ValueError(f"{name!r} is not a variant name ({NAME_PATTERN})")
        return variants

    @field_validator("observe")
    @classmethod
    def _observed_paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            parts = path.split("/")
            if path.startswith("/") or not path or any(p in ("", ".", "..") for p in parts):
                raise ValueError(f"observe: {path!r} must be a plain path inside the project")
        if len(set(paths)) != len(paths):
            raise ValueError("observe: a script is named twice")
        return paths

    @model_validator(mode="after")
    def _expected_levels(self) -> SuiteConfig:
        wrong = [k for k in self.expected if self.ladder and k not in ("L1", "L2", "L3")]
        if wrong:
            raise ValueError(f"expected: {', '.join(wrong)} is not a level (L1, L2 or L3)")
        return self

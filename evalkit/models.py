"""The one set of data contracts every evalkit command shares.

Models read from files people write forbid unknown fields, so a typo fails loudly
instead of silently meaning nothing. Models written to disk carry ``schema_version``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION = 1

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
"""What a run id or a variant name may be: a name that is never a path, an option or empty."""
RESERVED_VARIANTS = ("suite", "none")
"""Variant names evalkit gives meanings of its own: the suite's own wording, and no plugin."""


def is_name(text: str) -> bool:
    return re.fullmatch(NAME_PATTERN, text) is not None


Polarity = Literal["positive", "negative"]
Level = Literal["L1", "L2", "L3"]
ScenarioSet = Literal["run", "reserve"]
VerdictValue = Literal["PASS", "FAIL", "ERROR"]


class Model(BaseModel):
    """Base of every evalkit model. Schemas build on first use, not at import, so a command
    pays only for the models it touches."""

    model_config = ConfigDict(defer_build=True)


class Strict(Model):
    """Base for anything a person writes: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class StrictAliased(Strict):
    """A Strict model whose fields named after Python keywords (`in_` for `in`) may also be
    given by their field name, as the code that builds them does."""

    model_config = ConfigDict(populate_by_name=True)


# --------------------------------------------------------------------------- suite config


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


# --------------------------------------------------------------------------- scenarios


class Premise(Strict):
    file: str = Field(description="suite-relative path of the fixture file that shows the premise")
    marker: str = Field(description="a string found in that file")


class Launch(Strict):
    """A scenario's own launch limits (a `claude plugin eval` case's): the tighter of these
    and the command line's applies."""

    reps: int | None = Field(None, ge=1, description="`run`'s reps when --reps is not given")
    max_turns: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0, description="seconds per rep")
    tools: list[str] | None = Field(None, description="the CLI's --tools: the only tools it has")


class Scenario(Strict):
    """A scenario's front matter. The Task block is deliberately not a field."""

    id: str
    polarity: Polarity
    level: Level | None = Field(None, description="required in a suite with a ladder")
    kind: str | None = Field(
        None, pattern=r"^[a-z][a-z0-9-]*$", description="required in a suite without a ladder"
    )
    set: ScenarioSet
    topic: str
    premise: Premise
    without: list[str] = Field(
        default_factory=list,
        description="project-relative paths this scenario's sandbox leaves out",
    )
    expect: dict[str, Any] = Field(default_factory=dict, description="checker-specific")
    calibration: dict[str, Any] = Field(default_factory=dict, description="checker-specific")
    launch: Launch = Field(default_factory=Launch)


@dataclass(frozen=True)
class ScenarioFile:
    """A loaded scenario (`suite/scenarios.py` reads one). It holds the prose before the Task
    block and never the Task itself."""

    scenario: Scenario
    path: Path
    sha256: str
    prose: str

    @property
    def id(self) -> str:
        return self.scenario.id


# --------------------------------------------------------------------------- scripts


class Quote(Strict):
    """Makes a text react to what the tools returned: ``{quote}`` in it becomes the first
    match of ``pattern`` (its first group, if it has one) in the latest tool result."""

    pattern: str
    fallback: str = Field(description="the whole text to say when nothing matches")


class TextBlock(Strict):
    type: Literal["text"] = "text"
    text: str
    quote: Quote | None = None


class ToolUseBlock(Strict):
    type: Literal["tool_use"] = "tool_use"
    name: str
    input: dict[str, Any]


Block = Annotated[TextBlock | ToolUseBlock, Field(discriminator="type")]


class Step(Strict):
    """One assistant message: what the model says and the tools it calls at once."""

    blocks: list[Block]


class Script(Strict):
    """A whole agent turn, played step by step.

    Strings may hold ``{sandbox}``, ``{project}``, ``{real_vault}`` and each extra
    fixture's name; they expand once the sandbox exists.
    """

    steps: list[Step] = Field(default_factory=list)
    final_text: str = "Done."
    final_quote: Quote | None = Field(None, description="makes final_text reactive")


# --------------------------------------------------------------------------- sandbox


class SandboxManifest(Model):
    schema_version: int = SCHEMA_VERSION
    scenario: str
    suite: str
    fixture_hashes: dict[str, str]
    evalkit_version: str
    created: str


# --------------------------------------------------------------------------- transcript


class InitEvent(Model):
    model_config = ConfigDict(extra="ignore")

    cwd: str = ""
    session_id: str = ""
    model: str = ""
    claude_code_version: str = ""
    tools: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    plugins: list[dict[str, Any]] = Field(default_factory=list)


class HookEvent(Model):
    model_config = ConfigDict(extra="ignore")

    subtype: str
    hook_name: str = ""
    hook_event: str = ""
    outcome: str = ""
    exit_code: int | None = None
    output: str = ""


class ApiRetry(Model):
    model_config = ConfigDict(extra="ignore")

    attempt: int = 0
    error_status: int | None = None
    error: str | None = None
    retry_delay_ms: int | None = None


class ApiErrorMessage(Model):
    """The CLI's synthetic assistant line (``"is_api_error_message": true``) that ends a run it
    could not complete: its own error kind, the HTTP status when there was one, and its text."""

    error: str = ""
    status: int | None = None
    error_type: str = ""
    cause: str = Field("", description="the CLI's api_error field, e.g. connection_failed")
    text: str = ""


class ToolCall(Model):
    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool | None = None
    line: int = 0
    """The transcript line (from 0) of its tool_use block: where it sits on the rep's timeline."""
    result_line: int | None = None
    """The line of its result; None when none came back."""


class ResultEvent(Model):
    model_config = ConfigDict(extra="ignore")

    subtype: str = ""
    is_error: bool = False
    terminal_reason: str | None = None
    result: str | None = ""
    num_turns: int = 0
    duration_ms: int = 0
    total_cost_usd: float = 0.0
    usage: dict[str, Any] = Field(default_factory=dict)
    api_error_status: int | None = None
    api_error_type: str | None = None
    errors: list[str] | None = None


class Transcript(Model):
    """What a stream-json transcript says; whether it is a measurement is scoring's call."""

    init: InitEvent | None = None
    hooks: list[HookEvent] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    texts: list[str] = Field(default_factory=list)
    retries: list[ApiRetry] = Field(default_factory=list)
    api_error: ApiErrorMessage | None = None
    assistant_lines: int = Field(0, description="assistant lines from the model, not the CLI")
    result: ResultEvent | None = None
    bad_lines: list[int] = Field(
        default_factory=list, description="1-based lines that did not parse"
    )
    lines: int = 0
    agent: str = Field("claude", description="whose stream it is, known by its opening event")

    @property
    def model_id(self) -> str:
        return self.init.model if self.init else ""

    @property
    def cli_version(self) -> str:
        return self.init.claude_code_version if self.init else ""


# --------------------------------------------------------------------------- verdicts


class JudgeRecord(Model):
    schema_version: int = SCHEMA_VERSION
    prompt_sha256: str
    raw_output: str
    answer: Literal["YES", "NO"] | None = None
    error: str | None = None


class Verdict(Model):
    schema_version: int = SCHEMA_VERSION
    scenario: str
    model: str
    polarity: Polarity
    axis_a: str = Field(description="A:PASS, A:FAIL, A:yes, A:no or A:ERROR")
    axis_b: str = Field(description="B:PASS, B:FAIL or B:ERROR")
    verdict: VerdictValue
    reasons: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list, description="informational, never decisive")
    judge: JudgeRecord | None = None


class ResultRow(Model):
    """One line of a results TSV; the first six columns are the ones autoresearch loops read."""

    scenario: str
    model: str
    a: str
    b: str
    verdict: VerdictValue
    reasons: str = Field(description="decisive reasons, then flags, ';'-separated")
    flags: str = Field("-", description="the informational flags alone")
    rep: int = 0
    run_id: str = ""
    time: str = ""
    evalkit_version: str = ""
    cli_version: str = ""
    model_id: str = ""
    bundle_id: str = ""
    turns: int = 0
    duration_ms: int = 0
    cost_usd_estimate: float = Field(
        0.0, description="the CLI's own estimate, from the price table it bundles; not a bill"
    )
    schema_version: int = SCHEMA_VERSION
    attempt: int = Field(1, description="which attempt of the rep this row is; 1 unless retried")
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    variant: str = Field("", description="the subject's variant name; 'suite' for its own")
    subject_hash: str = Field(
        "",
        pattern=r"^(sha256:[0-9a-f]{64})?$",
        description="hash of the subject (wording) the rep ran with; whole, so a torn row fails",
    )


# --------------------------------------------------------------------------- guarded paths


class Reach(Model):
    """What a rep's agent could reach, kept with its process record: the rule that names
    escapes (scoring/escapes.py) reads it, never the machine, so verify re-derives it."""

    confined: bool
    """False for a rep run with --unconfined: nothing stopped it, and its row says so."""
    writable: list[str] = []
    """The rep's own folders: the project and side stores, config dir, plugin copies, HOME."""
    private: list[str] = []
    """Folders private to the sandbox (its /tmp): the rep's own, except where they would
    shadow a hidden path."""
    readable: list[str] = []
    """Read-only mounts: system folders, the CLI install, language runtimes, credentials."""
    hidden: list[str] = []
    """Absent from the sandbox: the suite, the results folder, the scratch of every rep, the
    user's HOME, the guarded paths."""


class GuardEntry(Model):
    """One path under a guarded root: [size, mtime_ns] (size -1 for a folder), and the
    sha256 of a file that changed during the rep."""

    before: list[int] | None = None
    after: list[int] | None = None
    sha256: str | None = None


class GuardPath(Model):
    """A guarded real-world path observed before and after one rep."""

    root: str
    before_count: int = 0
    before_digest: str = ""
    after_count: int = 0
    after_digest: str = ""
    changed: dict[str, GuardEntry] = Field(
        default_factory=dict, description="path relative to root ('.' for root) -> its entry"
    )


class GuardRecord(Model):
    """guard.json: what every guarded real-world path looked like around the rep. Only the
    entries that differ are kept whole; the rest are named by count and digest."""

    schema_version: int = SCHEMA_VERSION
    paths: list[GuardPath] = Field(default_factory=list)

    def changes(self) -> list[str]:
        """Every changed path, absolute, in a stable order."""
        found = []
        for path in self.paths:
            for rel in sorted(path.changed):
                found.append(path.root if rel == "." else f"{path.root.rstrip('/')}/{rel}")
        return found


# --------------------------------------------------------------------------- evidence


EVIDENCE_FILES: dict[str, str] = {
    "transcript": "transcript.jsonl",
    "stderr": "stderr.txt",
    "check": "check.json",
    "judge": "judge.json",
    "process": "process.json",
    "guard": "guard.json",
    "observed": "observed.jsonl",
    "checker_error": "checker-error.txt",
}
"""The one table of a rep's evidence file names: role (a key of `EvidenceLine.files`) -> the
file's name in its evidence folder. `records/keep.py` writes them; no other module spells one."""
DIFF_SUFFIX = ".diff"
"""A fixture folder's kept diff is `<folder>.diff`, role `<folder>_diff`."""


class EvidenceLine(Model):
    """One rep in WORKDIR/manifest.jsonl: where its evidence is and what it was run against."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    scenario: str
    model: str
    rep: int
    evidence: str = Field(description="folder relative to WORKDIR")
    files: dict[str, str] = Field(description="role -> path relative to the evidence folder")
    file_hashes: dict[str, str] = Field(
        default_factory=dict, description="role -> sha256 of that file, as it was kept"
    )
    declarations: dict[str, Any]
    bundle_id: str
    verdict: VerdictValue
    results: str = Field("", description="the results TSV the row went to, relative to WORKDIR")
    attempt: int = Field(1, description="1, or the retry this is (2 for the first retry)")
    superseded_by: int | None = Field(
        None, description="the attempt that replaced this one; its row is the rep's row"
    )
    retry_reason: str = Field("", description="why this attempt was run again, when it was")
    rescore_of: str = Field(
        "",
        description="the run id of the rep this line scores again with newer scoring code "
        "(`evalkit rescore`); that rep's row stays in the file, replaced",
    )
    usage: dict[str, int | float] = Field(
        default_factory=dict, description="tokens, turns, duration and the CLI's cost estimate"
    )


class PlanCell(Model):
    scenario: str
    model: str
    reps: int
    variant: str = Field("", description="the subject variant; empty for the run's own")
    cli: str = Field("", description="the CLI version asked for (--cli); empty for the default")
    rep_numbers: list[int] = Field(
        default_factory=list, description="which reps, when not 1..reps (a shard's slice)"
    )

    def numbers(self) -> list[int]:
        return self.rep_numbers or list(range(1, self.reps + 1))


class CellExpectation(Model):
    """The verdict a reference policy must get on one scenario: what `calibrate` holds it to."""

    scenario: str
    model: str
    verdict: VerdictValue
    reason: str | None = Field(None, description="a reason or flag the row must name, if any")
    attempt: int = Field(1, description="the attempt the verdict must come from")


class Plan(Model):
    """What a run or grid set out to do, so anyone can count what should be there."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    created: str
    command: str
    cells: list[PlanCell]
    results: str = Field("", description="the results TSV, relative to WORKDIR")
    skipped: list[PlanCell] = Field(
        default_factory=list,
        description="reps of this run_id's plan that will not run, and why (skip_reason)",
    )
    skip_reason: str = ""
    grid_digest: str = Field("", description="a sharded grid's digest: the same on every shard")
    shard: str = Field("", description="I/N of a sharded grid")
    grid_cells: int = Field(0, description="a sharded grid's cells over all its shards")
    suite: str = Field("", description="the suite whose scenarios the plan runs")
    inner_loop: bool = Field(
        False, description="a reduced grid (failed cells plus controls), not the whole set"
    )
    calibration: bool = Field(
        False, description="written by `calibrate`: reference policies, not a measurement"
    )
    expected_verdicts: list[CellExpectation] = Field(
        default_factory=list, description="a calibration's expected verdict of every cell"
    )
    preflight: Literal["", "passed", "skipped"] = Field(
        "",
        description="for a real model: `passed` when the self-test and a policy:oracle rep "
        "through the CLI proved the instrument first, `skipped` with --skip-preflight; empty "
        "when every model is a policy",
    )


class VerificationRecord(Model):
    """What `evalkit verify` concluded about a results folder, and the files it concluded it
    from, by hash: `report` reads the verdict only while every hash still matches."""

    schema_version: int = SCHEMA_VERSION
    suite: str
    verified_at: str
    evalkit_version: str
    key: dict[str, str] = Field(
        description="plans, manifest, each results file, the evidence listing and the scoring "
        "code -> its hash when verify began"
    )
    trials: int
    failed_trials: int
    all_rederived: bool
    publishable: bool
    problems: list[str] = Field(description="why not publishable; empty when it is")

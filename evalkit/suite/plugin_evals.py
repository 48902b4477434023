"""A plugin's `claude plugin eval` folder, read as an evalkit suite.

`evalkit --suite PLUGIN_DIR` works on a plugin that keeps its cases in `evals/` (or the
folder its manifest's `experimental.evals` names). The cases are translated, once per
load, into an ordinary rules suite written inside the eval folder (`.evalkit-suite/`):
one scenario per case (its prompt the held-out Task), the graders as conditions, and the
subject a copy of the plugin *without* its eval folder, so the plugin the agent loads never
holds the graders, the lock or any result. The lock is `<evaldir>/evalkit.lock` and the
default WORKDIR `<evaldir>/evalkit-results/`: both inside the instrument, never loaded.

Everything is refused before anything is written, in one line naming the file and field.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from evalkit.checkers.rules.plugin_graders import (
    Grader,
    GraderError,
    LlmGrader,
    case_rules,
    criteria,
    indicators,
    parse_grader,
)
from evalkit.checkers.rules.reference import CannotGenerate
from evalkit.errors import ConfigError
from evalkit.models import Model
from evalkit.suite.plugin_mocks import read_mocks
from evalkit.suite.plugin_oracle import generated_calibration
from evalkit.suite.plugin_scaffold import STAMP, scaffold
from evalkit.suite.provenance import reserve_dir
from evalkit.suite.scenarios import decode_utf8, split_front_matter
from evalkit.suite.yamlio import describe, dump, load_text

GENERATED = ".evalkit-suite"
"""The translated suite, inside the eval folder."""
MARKER = "plugin-evals.json"
"""In the translated suite's root: which plugin and eval folder it came from."""
RESULTS = "evalkit-results"
LOCK = "evalkit.lock"
SIDECAR = "evalkit.yaml"
SETTINGS = "evalkit-settings.yaml"
WRITING = f"{GENERATED}/.writing"
"""The lock two commands take in turn to write the translated suite: inside it, so the
suite's own .gitignore keeps it out of the plugin's repository as it keeps the rest."""
IGNORE_ALL = b"# rewritten by evalkit from the eval folder on every load: never commit it\n*\n"
"""The translated suite's own .gitignore: the lock and results that matter live beside it."""
SKIPPED = frozenset({GENERATED, RESULTS, "results", "mocks"})
"""Folders of an eval folder that are never cases: ours, the source runner's, its mocks."""
PLUGIN_COPY = "plugin"
SCAFFOLD_OUT = "fixtures/project"
MOCK_SPEC = "mcp-mocks.json"
"""The eval folder's fixed MCP mocks, in the translated suite (see plugin_mocks)."""


class _Strict(Model):
    model_config = ConfigDict(extra="forbid")


class _Loose(Model):
    """The pinned CLI drops the keys of a case it does not know (graders excepted), so
    evalkit does too: a case it runs loads here."""

    model_config = ConfigDict(extra="ignore")


class CaseContext(_Loose):
    scaffold_script: str | None = None
    history_file: str | None = None
    add_dirs: list[str] = Field(default_factory=list)


class Execution(_Loose):
    """case.yaml's `execution:` (or prompt.md's front matter and body)."""

    prompt: str | None = None
    max_turns: int | None = Field(None, ge=1, le=200, strict=True)
    timeout_seconds: int | None = Field(None, ge=1, le=3600, strict=True)
    model: str | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    artifact_publish: bool | None = None
    growthbook_overrides: dict[str, Any] | None = None
    append_system_prompt: str | None = None
    env: dict[str, str] = Field(default_factory=dict)


class CaseSettings(_Loose):
    """A case as the pinned CLI's schema has it (case.yaml, merged with prompt.md)."""

    schema_version: str
    name: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    plugins: list[str] | None = None
    context: CaseContext = Field(default_factory=CaseContext)
    execution: Execution
    runs: int | None = Field(None, ge=1, le=50, strict=True)
    graders: list[Any] = Field(min_length=1)
    expected_outcome: str | None = None


PROSE_TOP = ("schema_version", "name", "description", "tags", "plugins", "runs",
             "expected_outcome")  # fmt: skip
PROSE_EXECUTION = (
    "model",
    "max_turns",
    "timeout_seconds",
    "allowed_tools",
    "disallowed_tools",
    "artifact_publish",
    "growthbook_overrides",
    "append_system_prompt",
    "env",
)
"""The only keys prompt.md's front matter may hold (measured on 2.1.328); the rest of a case
(context, graders) goes in a case.yaml beside it."""
RUNNER_MAX_TURNS = 10
RUNNER_TIMEOUT = 300
"""The source runner's `execution.max_turns` and `timeout_seconds` when a case gives none
(its default `runs`, 3, is not applied: reps are `--reps` or `launch.reps`)."""
PROSE_SCHEMA = "1.1"
"""The schema_version the source runner gives a prompt.md case without a case.yaml."""
SCHEMA_MAJOR = 1
PROMPT_TEMPLATE = "TODO: describe what the agent should do"
CRITERIA_TEMPLATE = "TODO: describe what a successful response looks like"
"""The blank lines `claude plugin eval init --bare` writes; a case still holding one is refused."""
UNHONOURED = {
    "plugins": "the plugin under test is the one evalkit loads",
    "execution.append_system_prompt": "it changes the system prompt the agent is measured under",
    "execution.env": "evalkit gives every rep the same environment",
    "execution.growthbook_overrides": "it changes the CLI's feature flags",
    "execution.artifact_publish": "artifact publishing is not served",
    "context.history_file": "give the case a scaffold_script instead",
    "context.add_dirs": "give the case a scaffold_script instead",
}


class EvalSettings(_Strict):
    """`<evaldir>/evalkit-settings.yaml`: how evalkit scores the whole eval folder."""

    ablation: Literal["none", "with-without"] = Field(
        "none",
        description="none: a with-only grader is scored with the plugin (as `claude plugin "
        "eval --ablation none`); with-without: it is a plugin-fired flag in both arms (as "
        "its default, --ablation with-without)",
    )


def eval_settings(evals: Path) -> EvalSettings:
    path = evals / SETTINGS
    if not path.is_file():
        return EvalSettings()
    raw = _yaml_file(path)
    try:
        return EvalSettings.model_validate(raw or {})
    except ValidationError as exc:
        raise ConfigError(describe(exc, raw, path).splitlines()[0]) from None


class Sidecar(_Strict):
    """`<case>/evalkit.yaml`: what evalkit needs that the source format cannot say."""

    calibration: dict[str, Any] = Field(default_factory=dict)


@dataclass
class Case:
    """One case; its prompt is kept only to be written as the scenario's Task (repr hides it)."""

    id: str
    folder: Path
    settings: CaseSettings
    graders: list[Grader]
    prompt: str = field(repr=False)
    calibration: dict[str, Any] = field(default_factory=dict)
    reserve: bool = False
    ablation: str = "none"
    """As `claude plugin eval --ablation` scores with-only graders (`SETTINGS`)."""

    @property
    def polarity(self) -> str:
        return case_rules(self.graders, ablation=self.ablation)[0]


def manifest(plugin: Path) -> dict[str, Any] | None:
    for rel in (".claude-plugin/plugin.json", "plugin.json"):
        path = plugin / rel
        if path.is_file():
            try:
                data = json.loads(path.read_bytes().decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise ConfigError(f"{path}: not valid JSON") from None
            return data if isinstance(data, dict) else None
    return None


def eval_dir(plugin: Path) -> Path | None:
    """The plugin's eval folder when it is a plugin with one, else None."""
    data = manifest(plugin)
    if data is None:
        return None
    experimental = data.get("experimental")
    rel = experimental.get("evals") if isinstance(experimental, dict) else None
    if rel is None:
        rel = "evals"
    if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
        raise ConfigError(
            f"{plugin}/.claude-plugin/plugin.json: experimental.evals: must be "
            "a folder inside the plugin"
        )
    folder = plugin / rel
    return folder if folder.is_dir() else None


def instrument_home(root: Path) -> Path | None:
    """The eval folder a translated suite root came from, or None for any other suite."""
    marker = root / MARKER
    return root.parent if marker.is_file() and root.name == GENERATED else None


def suite_root_for(plugin: Path) -> Path | None:
    """The translated suite of a plugin with an eval folder (written afresh), or None."""
    evals = eval_dir(plugin)
    if evals is None:
        return None
    for name, folder in ((GENERATED, True), (WRITING, False), (LOCK, False), (RESULTS, True)):
        own_path(evals, name, folder)
    cases = unique_ids(read_cases(evals) + reserve_cases(evals))
    (evals / GENERATED).mkdir(exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    held = os.open(evals / WRITING, flags, 0o644)  # two commands at once write it in turn
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        return write_suite(plugin, evals, cases)
    finally:
        os.close(held)


def own_path(base: Path, rel: str, folder: bool = False) -> Path:
    """base/rel, a path evalkit writes inside a plugin's eval folder, refused in one line when
    it or a folder on the way to it under base is a link, or when it is there as something
    other than what evalkit keeps there (a regular file, or with `folder` a folder): a
    plugin may ship anything, and a write through a link would land outside it."""
    path = base
    parts = Path(rel).parts
    for index, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return base / rel
        last = index == len(parts) - 1
        want_folder = folder or not last
        ok = stat.S_ISDIR(mode) if want_folder else stat.S_ISREG(mode)
        if not ok:
            kind = "a link" if stat.S_ISLNK(mode) else "not a regular " + (
                "folder" if want_folder else "file")
            raise ConfigError(f"{path}: is {kind}; evalkit writes its translated suite and lock "
                              "there only as its own files: remove it")
    return base / rel


# --------------------------------------------------------------------------- reading cases


def _case_folders(evals: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(evals):
        here = Path(folder)
        dirs[:] = sorted(
            d for d in dirs if not (here == evals and d in SKIPPED) and not d.startswith(".")
        )
        if "case.yaml" in files or "prompt.md" in files:
            found.append(here)
            dirs[:] = [d for d in dirs if d != "graders"]
    return sorted(found)


def _case_id(evals: Path, folder: Path) -> str:
    return folder.relative_to(evals).as_posix().replace("/", "--")


def _yaml_file(path: Path) -> Any:
    return load_text(decode_utf8(path.read_bytes(), path), path)


def _front(path: Path) -> tuple[Any, str]:
    text = decode_utf8(path.read_bytes(), path)
    if not text.startswith("---"):
        return {}, text
    front, body, first = split_front_matter(text, path)
    return load_text(front, path, first_line=2), body


def _prose(folder: Path, case_id: str) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    """prompt.md's front matter split as the source runner splits it (top-level keys,
    execution keys), and its body; any other key is refused naming it."""
    source = folder / "prompt.md"
    if not source.is_file():
        return {}, {}, None
    front, body = _front(source)
    if front is not None and not isinstance(front, dict):
        raise ConfigError(f"{source}: front matter: must be a mapping")
    top: dict[str, Any] = {}
    execution: dict[str, Any] = {}
    for key, value in (front or {}).items():
        if key in PROSE_TOP:
            top[key] = value
        elif key in PROSE_EXECUTION:
            execution[key] = value
        else:
            raise ConfigError(
                f"{source}: {key}: case '{case_id}': not a prompt.md front-matter key (it takes "
                f"{', '.join(PROSE_TOP + PROSE_EXECUTION)}); put it in a case.yaml beside it"
            )
    return top, execution, body.strip() or None


def _grader_files(folder: Path, case_id: str) -> list[tuple[Any, str]]:
    """graders/*.md with front matter, named by their file, the body their criteria (llm) or
    pattern (regex) when the front matter gives none; a file without front matter is not a
    grader, as in the source runner."""
    found: list[tuple[Any, str]] = []
    folder_g = folder / "graders"
    for path in sorted(folder_g.glob("*.md")) if folder_g.is_dir() else []:
        text = decode_utf8(path.read_bytes(), path)
        if not text.startswith("---"):
            continue
        front, body = _front(path)
        raw = dict(front) if isinstance(front, dict) else {}
        if not isinstance(raw.get("type"), str):
            raise ConfigError(
                f"{path}: type: case '{case_id}', grader '{path.stem}': the front "
                "matter needs a type"
            )
        raw = {"name": path.stem, **raw}
        filled = {"llm": "criteria", "baseline": "criteria", "regex": "pattern"}.get(raw["type"])
        if filled and raw.get(filled) is None and body.strip():
            raw[filled] = body.strip()
        found.append((raw, f"{path}: case '{case_id}', grader '{path.stem}'"))
    return found


def _merged(folder: Path, case_id: str) -> tuple[dict[str, Any], Path, list[tuple[Any, str]]]:
    """The case as the source runner assembles it: case.yaml (or a default naming the folder),
    then prompt.md's keys over it, its body as execution.prompt, and the grader files' graders
    after case.yaml's. Returns the data, the file a refusal names, and each grader with where
    it was written."""
    source = folder / "case.yaml"
    base: dict[str, Any] = {"schema_version": PROSE_SCHEMA, "name": folder.name}
    if source.is_file():
        loaded = _yaml_file(source)
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{source}: (top level): must be a mapping")
        base = dict(loaded or {})
    else:
        source = folder / "prompt.md"
    top, execution, body = _prose(folder, case_id)
    data = {**base, **top}
    own = base.get("execution")
    if isinstance(own, dict) or execution or body is not None:
        first: dict[str, Any] = own if isinstance(own, dict) else {}
        merged = {**first, **execution}
        before, after = first.get("disallowed_tools"), execution.get("disallowed_tools")
        if isinstance(before, list) and isinstance(after, list):
            merged["disallowed_tools"] = [*before, *after]  # both lists are kept
        if body is not None:
            merged["prompt"] = body
        data["execution"] = merged
    graders: list[tuple[Any, str]] = []
    raw = base.get("graders")
    for index, grader in enumerate(raw if isinstance(raw, list) else []):
        label = grader.get("name", index) if isinstance(grader, dict) else index
        graders.append((grader, f"{source}: graders[{index}]: case '{case_id}', grader '{label}'"))
    graders += _grader_files(folder, case_id)
    data["graders"] = [g for g, _ in graders]
    return data, source, graders


def _schema_version(data: dict[str, Any], source: Path) -> None:
    version = data.get("schema_version")
    if not isinstance(version, str):
        raise ConfigError(f'{source}: schema_version: required, a string such as "1.0"')
    major = version.split(".")[0]
    if not major.isdigit():
        raise ConfigError(f"{source}: schema_version: {version!r} is not a version string")
    if int(major) > SCHEMA_MAJOR:
        raise ConfigError(
            f"{source}: schema_version: {version!r} is newer than the pinned "
            f"CLI's format ({SCHEMA_MAJOR}.x)"
        )


def _unhonoured(settings: CaseSettings) -> str | None:
    values = {
        "plugins": settings.plugins,
        "execution.append_system_prompt": settings.execution.append_system_prompt,
        "execution.env": settings.execution.env,
        "execution.growthbook_overrides": settings.execution.growthbook_overrides,
        "execution.artifact_publish": settings.execution.artifact_publish,
        "context.history_file": settings.context.history_file,
        "context.add_dirs": settings.context.add_dirs,
    }
    return next((k for k, v in values.items() if v), None)


def read_case(evals: Path, folder: Path) -> Case:
    """One case folder, checked whole: settings, prompt, graders, sidecar."""
    case_id = _case_id(evals, folder)
    data, source, raw_graders = _merged(folder, case_id)
    _schema_version(data, source)
    try:
        settings = CaseSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe(exc, data, source).splitlines()[0]) from None
    field_ = _unhonoured(settings)
    if field_ is not None:
        raise ConfigError(
            f"{source}: {field_}: case '{case_id}': evalkit cannot honour it ({UNHONOURED[field_]})"
        )
    script = settings.context.scaffold_script
    if script is not None:
        path = folder / script
        if script.startswith("/") or ".." in Path(script).parts or not path.is_file():
            raise ConfigError(
                f"{source}: context.scaffold_script: case '{case_id}': {script!r} "
                "is not a file in the case folder"
            )
    prompt = (settings.execution.prompt or "").strip()
    if not prompt:
        raise ConfigError(
            f"{source}: execution.prompt: case '{case_id}' has no prompt (a "
            "prompt.md body, or execution.prompt in case.yaml)"
        )
    graders = _graders(raw_graders, source, case_id)
    if PROMPT_TEMPLATE in prompt or any(CRITERIA_TEMPLATE in _grader_text(g) for g in graders):
        # an untouched `claude plugin eval init --bare` case: a placeholder, as `evalkit
        # init`'s Tasks are: self-test and calibrate prove it, no real model runs it, and
        # it is never frozen (`template_tasks` knows the line by its digest)
        prompt = PROMPT_TEMPLATE
    calibration: dict[str, Any] = {}
    sidecar = folder / SIDECAR
    if sidecar.is_file():
        raw = _yaml_file(sidecar)
        try:
            calibration = Sidecar.model_validate(raw or {}).calibration
        except ValidationError as exc:
            raise ConfigError(describe(exc, raw, sidecar).splitlines()[0]) from None
    return Case(case_id, folder, settings, graders, prompt, calibration)


def _grader_text(grader: Grader) -> str:
    return grader.criteria if isinstance(grader, LlmGrader) else str(getattr(grader, "pattern", ""))


def _graders(raw: list[tuple[Any, str]], source: Path, case_id: str) -> list[Grader]:
    graders: list[Grader] = []
    for data, where in raw:
        try:
            grader = parse_grader(data)
            case_rules([grader])
        except GraderError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        graders.append(grader)
    names = [g.name for g in graders]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ConfigError(f"{source}: graders: case '{case_id}': duplicate grader name '{twice}'")
    try:
        case_rules(graders)
    except GraderError as exc:
        raise ConfigError(f"{source}: graders: case '{case_id}': {exc}") from None
    return graders


def unique_ids(cases: list[Case]) -> list[Case]:
    """The cases, refused in one line naming both folders when two of them come to one id
    (`a/b` and `a--b` are both `a--b`): one would otherwise be dropped without a word."""
    seen: dict[str, Path] = {}
    for case in cases:
        other = seen.setdefault(case.id, case.folder)
        if other != case.folder:
            raise ConfigError(f"{other} and {case.folder}: both are case '{case.id}'; rename "
                              "one of the folders")
    return cases


def reserve_cases(evals: Path) -> list[Case]:
    """The cases `evalkit suite split-reserve` moved into the eval folder's reserve."""
    held = reserve_dir(evals)
    cases = [read_case(held, f) for f in _case_folders(held)] if held.is_dir() else []
    ablation = eval_settings(evals).ablation
    for case in cases:
        case.reserve, case.ablation = True, ablation
    return cases


def read_cases(evals: Path) -> list[Case]:
    cases = [read_case(evals, f) for f in _case_folders(evals)]
    if not cases:
        raise ConfigError(f"{evals}: no case (a folder with case.yaml or prompt.md)")
    scaffold_of(cases)
    ablation = eval_settings(evals).ablation
    for case in cases:
        case.ablation = ablation
    return cases


def scaffold_of(cases: list[Case]) -> tuple[Path, str] | None:
    """The one scaffold script every case shares (and where it is named), or None when no
    case has one. evalkit builds one fixture project per eval folder, so cases that differ
    in their scaffold are refused, naming the first that differs."""
    scripts = [
        (
            c,
            c.folder / c.settings.context.scaffold_script
            if c.settings.context.scaffold_script
            else None,
        )
        for c in cases
    ]
    first_case, first = scripts[0]
    body = first.read_bytes() if first is not None else None
    for case, script in scripts[1:]:
        if (script.read_bytes() if script is not None else None) != body:
            raise ConfigError(
                f"{_source(case)}: context.scaffold_script: case '{case.id}' differs from case "
                f"'{first_case.id}'; evalkit builds one fixture project per eval folder, so "
                "every case needs the same scaffold (or none)"
            )
    if first is None:
        return None
    return first, f"{_source(first_case)}: context.scaffold_script"


def _source(case: Case) -> Path:
    return case.folder / ("case.yaml" if (case.folder / "case.yaml").is_file() else "prompt.md")


# --------------------------------------------------------------------------- the suite


def _scenario_text(case: Case) -> str:
    rubric = case.id if criteria(case.graders) else None
    polarity, expect = case_rules(case.graders, rubric, case.ablation)
    front: dict[str, Any] = {
        "id": case.id,
        "polarity": polarity,
        "kind": "plugin-eval",
        "set": "reserve" if case.reserve else "run",
        "topic": case.settings.description or case.settings.name,
        "premise": {"file": "plugin-evals.json", "marker": '"plugin"'},
        "expect": expect,
    }
    execution = case.settings.execution
    launch = {
        "reps": case.settings.runs,
        "max_turns": execution.max_turns or RUNNER_MAX_TURNS,
        "timeout": execution.timeout_seconds or RUNNER_TIMEOUT,
        "tools": launch_tools(case.settings.execution),
    }
    front["launch"] = {k: v for k, v in launch.items() if v is not None}
    calibration = dict(case.calibration) or _generated(case)
    if polarity == "positive" and "oracle" in calibration:
        calibration.setdefault("act", calibration["oracle"])  # acting is doing what it asks
    front["calibration"] = calibration
    text = json.dumps(front, indent=1, ensure_ascii=False)  # JSON is YAML, every string quoted
    return f"---\n{text}\n---\n\nA `claude plugin eval` case.\n\n## Task\n\n{case.prompt}\n"


DEFAULT_TOOLS = (
    "Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup", "Skill",
    "ToolSearch", "Workflow", "Write",
)  # fmt: skip
"""The pinned CLI's tools when --tools is not given (measured on 2.1.328)."""


def launch_tools(settings: Execution) -> list[str] | None:
    """allowed_tools and disallowed_tools as the CLI's --tools. Under
    --dangerously-skip-permissions, --allowedTools restricts nothing; --tools is the set the
    model can call at all. An empty allowed_tools (the source format's default) restricts
    nothing here."""
    if not settings.allowed_tools and settings.disallowed_tools is None:
        return None
    allowed = settings.allowed_tools or DEFAULT_TOOLS
    denied = set(settings.disallowed_tools or ())
    return [t for t in allowed if t not in denied]


def _generated(case: Case) -> dict[str, Any]:
    try:
        return generated_calibration(case.graders, indicators(case.graders, case.ablation))
    except CannotGenerate as exc:
        raise ConfigError(
            f"{case.folder / SIDECAR}: calibration: case '{case.id}': no oracle can be "
            f"generated ({exc}); give a `calibration:` block (oracle, act) in this sidecar"
        ) from None


def _files(plugin: Path, evals: Path, cases: list[Case]) -> dict[str, bytes]:
    """Every file of the translated suite but the plugin copy, by suite-relative path."""
    rubrics = {c.id: criteria(c.graders) for c in cases}
    config: dict[str, Any] = {
        "name": _suite_name(manifest(plugin) or {}, plugin),
        "description": f"the `claude plugin eval` cases of {plugin.name}",
        "fixtures": {"project": SCAFFOLD_OUT},
        "plugins": [PLUGIN_COPY],
        "ladder": False,
        "checker": {"name": "rules"},
    }
    files = {
        "evalkit.yaml": dump(config).encode(),
        MARKER: json.dumps({"plugin": plugin.name, "evals": evals.name}).encode(),
        ".gitignore": IGNORE_ALL,
    }
    mocks = read_mocks(evals)
    if mocks:
        config["mcp_mocks"] = MOCK_SPEC
        files[MOCK_SPEC] = json.dumps(mocks, indent=1, sort_keys=True).encode()
        files["evalkit.yaml"] = dump(config).encode()
    if any(rubrics.values()):
        files["judge-rubric.md"] = JUDGE_PREAMBLE.encode()
        named = {cid: f"rubrics/{cid}.md" for cid, text in rubrics.items() if text}
        config["judge"] = {"rubric": "judge-rubric.md", "rubrics": named}
        files["evalkit.yaml"] = dump(config).encode()
        for cid, rel in named.items():
            files[rel] = f"{JUDGE_PREAMBLE}\n{rubrics[cid]}\n".encode()
    for case in cases:
        folder = "scenarios-reserve" if case.reserve else "scenarios"
        files[f"{folder}/{case.id}.md"] = _scenario_text(case).encode()
    return files


JUDGE_PREAMBLE = (
    "Answer YES if the agent's final message meets the criteria below, NO otherwise. "
    "Your first word is YES or NO.\n"
)


def _suite_name(data: dict[str, Any], plugin: Path) -> str:
    name = data.get("name")
    return f"{name if isinstance(name, str) and name else plugin.name}-evals"


def write_suite(plugin: Path, evals: Path, cases: list[Case]) -> Path:
    """Write the translated suite: files rewritten only where their bytes differ, so an
    unchanged eval folder leaves the suite (and the lock's hashes) untouched."""
    root = own_path(evals, GENERATED, folder=True)
    wanted = _files(plugin, evals, cases)
    for rel in [*wanted, SCAFFOLD_OUT, PLUGIN_COPY, PLUGIN_COPY + ".new", "scenarios",
                "scenarios-reserve"]:
        own_path(root, rel, folder=rel not in wanted)
    own_path(root, str(Path(SCAFFOLD_OUT).parent / STAMP))
    shared = scaffold_of(cases)
    if shared is not None:
        scaffold(shared[0], root / SCAFFOLD_OUT, shared[1])
    elif (root / SCAFFOLD_OUT).parent.joinpath(STAMP).is_file():  # a scaffold was dropped
        shutil.rmtree(root / SCAFFOLD_OUT)
        (root / SCAFFOLD_OUT).parent.joinpath(STAMP).unlink()
    (root / SCAFFOLD_OUT).mkdir(parents=True, exist_ok=True)
    for stale in sorted(root.glob("scenarios*/*.md")):
        if f"{stale.parent.name}/{stale.name}" not in wanted:
            stale.unlink()
    for rel, data in wanted.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
    _copy_plugin(plugin, evals, root / PLUGIN_COPY)
    return root


def _copy_plugin(plugin: Path, evals: Path, dest: Path) -> None:
    """The subject: the plugin without its eval folder (nor .git), refreshed in place."""

    def ignore(folder: str, names: list[str]) -> list[str]:
        here = Path(folder)
        gone = (evals, reserve_dir(evals))
        return [n for n in names if here / n in gone or (here == plugin and n == ".git")]

    staged = dest.with_name(dest.name + ".new")
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(plugin, staged, symlinks=True, ignore=ignore)
    if dest.is_dir() and _same_tree(staged, dest):
        shutil.rmtree(staged)
        return
    shutil.rmtree(dest, ignore_errors=True)
    staged.rename(dest)


def _same_tree(a: Path, b: Path) -> bool:
    from evalkit.scoring.hashing import tree_hash

    return tree_hash(a) == tree_hash(b)

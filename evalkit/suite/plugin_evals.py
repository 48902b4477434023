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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from evalkit.checkers.rules.plugin_graders import (
    Grader,
    GraderError,
    case_rules,
    criteria,
    parse_grader,
)
from evalkit.checkers.rules.reference import CannotGenerate
from evalkit.errors import ConfigError
from evalkit.models import Model
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
WRITING = ".evalkit-suite.lock"
SKIPPED = frozenset({GENERATED, RESULTS, "results", "mocks"})
"""Folders of an eval folder that are never cases: ours, the source runner's, its mocks."""
PLUGIN_COPY = "plugin"
SCAFFOLD_OUT = "fixtures/project"


class _Strict(Model):
    model_config = ConfigDict(extra="forbid")


class CaseContext(_Strict):
    scaffold_script: str | None = None
    history_file: Any = None
    add_dirs: Any = None


class CaseSettings(_Strict):
    """case.yaml (or prompt.md's front matter): the fields of the source format evalkit reads."""

    name: str | None = None
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    prompt: str | None = None
    runs: int | None = Field(None, ge=1)
    max_turns: int | None = Field(None, ge=1)
    timeout_seconds: float | None = Field(None, gt=0)
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    model: str | None = None
    context: CaseContext = Field(default_factory=CaseContext)
    graders: list[Any] = Field(default_factory=list)


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

    @property
    def polarity(self) -> str:
        return case_rules(self.graders)[0]


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
        raise ConfigError(f"{plugin}/.claude-plugin/plugin.json: experimental.evals: must be "
                          "a folder inside the plugin")
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
    cases = read_cases(evals) + reserve_cases(evals)
    with open(evals / WRITING, "w") as held:  # two commands at once write it once each, in turn
        fcntl.flock(held, fcntl.LOCK_EX)
        return write_suite(plugin, evals, cases)


# --------------------------------------------------------------------------- reading cases


def _case_folders(evals: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(evals):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not (here == evals and d in SKIPPED)
                         and not d.startswith("."))
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


def read_case(evals: Path, folder: Path) -> Case:
    """One case folder, checked whole: settings, prompt, graders, sidecar."""
    case_id = _case_id(evals, folder)
    data: dict[str, Any] = {}
    source = folder / "case.yaml"
    prompt_body: str | None = None
    if source.is_file():
        loaded = _yaml_file(source)
        if not isinstance(loaded, dict):
            raise ConfigError(f"{source}: (top level): must be a mapping")
        data = dict(loaded)
        execution = data.pop("execution", None)
        if isinstance(execution, dict):
            data = {**dict(execution), **data}
    if (folder / "prompt.md").is_file():
        source = folder / "prompt.md"
        front, prompt_body = _front(source)
        if front is not None and not isinstance(front, dict):
            raise ConfigError(f"{source}: front matter: must be a mapping")
        data = {**data, **(front or {})}
    try:
        settings = CaseSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe(exc, data, source)) from None
    for name in ("history_file", "add_dirs"):
        if getattr(settings.context, name) is not None:
            raise ConfigError(f"{source}: context.{name}: case '{case_id}': evalkit cannot "
                              "honour it (give the case a scaffold_script instead)")
    script = settings.context.scaffold_script
    if script is not None:
        path = folder / script
        if script.startswith("/") or ".." in Path(script).parts or not path.is_file():
            raise ConfigError(f"{source}: context.scaffold_script: case '{case_id}': {script!r} "
                              "is not a file in the case folder")
    prompt = (prompt_body if prompt_body is not None else settings.prompt or "").strip()
    if not prompt:
        raise ConfigError(f"{source}: prompt: case '{case_id}' has no prompt")
    graders = _graders(folder, settings, source, case_id)
    calibration: dict[str, Any] = {}
    sidecar = folder / SIDECAR
    if sidecar.is_file():
        raw = _yaml_file(sidecar)
        try:
            calibration = Sidecar.model_validate(raw or {}).calibration
        except ValidationError as exc:
            raise ConfigError(describe(exc, raw, sidecar)) from None
    return Case(case_id, folder, settings, graders, prompt, calibration)


def _graders(folder: Path, settings: CaseSettings, source: Path, case_id: str) -> list[Grader]:
    graders: list[Grader] = []
    for index, raw in enumerate(settings.graders):
        label = raw.get("name", index) if isinstance(raw, dict) else index
        try:
            graders.append(parse_grader(raw))
        except GraderError as exc:
            raise ConfigError(f"{source}: graders[{index}]: case '{case_id}', grader "
                              f"'{label}': {exc}") from None
    folder_g = folder / "graders"
    for path in sorted(folder_g.glob("*.md")) if folder_g.is_dir() else []:
        front, body = _front(path)
        raw_g = dict(front) if isinstance(front, dict) else {}
        raw_g.setdefault("name", path.stem)
        if raw_g.get("type") == "llm" and not raw_g.get("criteria"):
            raw_g["criteria"] = body.strip()
        try:
            graders.append(parse_grader(raw_g))
        except GraderError as exc:
            raise ConfigError(f"{path}: case '{case_id}', grader '{path.stem}': {exc}") from None
    if not graders:
        raise ConfigError(f"{source}: graders: case '{case_id}' has no grader")
    for index, grader in enumerate(graders):
        try:
            case_rules([grader])
        except GraderError as exc:
            name = grader.name or str(index)
            raise ConfigError(f"{source}: case '{case_id}', grader '{name}': {exc}") from None
    try:
        case_rules(graders)
    except GraderError as exc:
        raise ConfigError(f"{source}: graders: case '{case_id}': {exc}") from None
    return graders


def reserve_cases(evals: Path) -> list[Case]:
    """The cases `evalkit split-reserve` moved into the eval folder's reserve."""
    held = reserve_dir(evals)
    cases = [read_case(held, f) for f in _case_folders(held)] if held.is_dir() else []
    for case in cases:
        case.reserve = True
    return cases


def read_cases(evals: Path) -> list[Case]:
    cases = [read_case(evals, f) for f in _case_folders(evals)]
    if not cases:
        raise ConfigError(f"{evals}: no case (a folder with case.yaml or prompt.md)")
    scaffold_of(cases)
    return cases


def scaffold_of(cases: list[Case]) -> tuple[Path, str] | None:
    """The one scaffold script every case shares (and where it is named), or None when no
    case has one. evalkit builds one fixture project per eval folder, so cases that differ
    in their scaffold are refused, naming the first that differs."""
    scripts = [
        (c, c.folder / c.settings.context.scaffold_script if c.settings.context.scaffold_script
         else None)
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
    polarity, expect = case_rules(case.graders, case.id if criteria(case.graders) else None)
    front: dict[str, Any] = {
        "id": case.id,
        "polarity": polarity,
        "kind": "plugin-eval",
        "set": "reserve" if case.reserve else "run",
        "topic": case.settings.description or case.id,
        "premise": {"file": "plugin-evals.json", "marker": '"plugin"'},
        "expect": expect,
    }
    launch = {
        "reps": case.settings.runs,
        "max_turns": case.settings.max_turns,
        "timeout": case.settings.timeout_seconds,
        "tools": launch_tools(case.settings),
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


def launch_tools(settings: CaseSettings) -> list[str] | None:
    """allowed_tools and disallowed_tools as the CLI's --tools. Under
    --dangerously-skip-permissions, --allowedTools restricts nothing; --tools is the set the
    model can call at all."""
    if settings.allowed_tools is None and settings.disallowed_tools is None:
        return None
    allowed = settings.allowed_tools if settings.allowed_tools is not None else DEFAULT_TOOLS
    denied = set(settings.disallowed_tools or ())
    return [t for t in allowed if t not in denied]


def _generated(case: Case) -> dict[str, Any]:
    try:
        return generated_calibration(case.graders)
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
    }
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
    root = evals / GENERATED
    wanted = _files(plugin, evals, cases)
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

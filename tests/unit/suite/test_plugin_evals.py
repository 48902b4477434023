"""A plugin's `claude plugin eval` folder loads as a suite: cases as scenarios, the plugin
without its eval folder as the subject, the lock and results inside the eval folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.records.folder.run_ids import default_workdir
from evalkit.suite.config import load_suite
from evalkit.suite.lock import lock_path
from evalkit.suite.task import read_task

PROMPT = "Please greet the whole team in a single line."


def plugin(tmp_path: Path, manifest: dict[str, object] | None = None) -> Path:
    root = tmp_path / "greeter"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(
        json.dumps(manifest or {"name": "greeter"})
    )
    (root / "skills" / "hello").mkdir(parents=True)
    (root / "skills" / "hello" / "SKILL.md").write_text("---\nname: hello\n---\nSay hi.\n")
    return root


def case_yaml(evals: Path, name: str, text: str) -> Path:
    folder = evals / name
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(text)
    return folder / "case.yaml"


def prompt_case(evals: Path, name: str, front: str, graders: dict[str, str]) -> None:
    folder = evals / name
    (folder / "graders").mkdir(parents=True)
    (folder / "prompt.md").write_text(f"---\n{front}---\n\n{PROMPT}\n")
    for grader, text in graders.items():
        (folder / "graders" / f"{grader}.md").write_text(text)


HEAD = 'schema_version: "1.0"\nname: {name}\n'
GREETS = HEAD.format(name="greets") + """runs: 2
execution:
  prompt: Say hello to the team.
graders:
  - name: used-skill
    type: tool_used
    tool: Skill
    input_match: "hello"
  - name: said-hi
    type: regex
    pattern: "\\\\bhi\\\\b"
    flags: i
"""
QUIET = HEAD.format(name="quiet") + """execution:
  prompt: What time is it?
graders:
  - name: no-skill
    type: tool_used
    tool: Skill
    min: 0
    max: 0
  - name: no-file
    type: file_exists
    path: "*.txt"
    exists: false
"""
LLM = "graders: [{name: ok, type: llm, criteria: ok}]\n"


def real(execution: str = "prompt: hi", rest: str = LLM, name: str = "bad") -> str:
    """A case.yaml in the pinned CLI's format: schema_version, name, execution, graders."""
    return HEAD.format(name=name) + f"execution: {{{execution}}}\n" + rest


def two_cases(tmp_path: Path) -> Path:
    root = plugin(tmp_path)
    case_yaml(root / "evals", "greets", GREETS)
    case_yaml(root / "evals", "quiet", QUIET)
    return root


def test_each_case_is_a_scenario_and_an_absence_only_case_is_a_negative(tmp_path: Path) -> None:
    suite = load_suite(two_cases(tmp_path))
    got = {s.id: s.scenario.polarity for s in suite.scenarios()}
    assert got == {"greets": "positive", "quiet": "negative"}


def test_the_plugin_the_agent_loads_holds_no_eval_folder_lock_or_results(tmp_path: Path) -> None:
    root = two_cases(tmp_path)
    (root / "evals" / "evalkit-results").mkdir()
    (root / "evals" / "evalkit-results" / "results.tsv").write_text("x\n")
    suite = load_suite(root)
    (copy,) = suite.plugin_dirs()
    listed = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert listed == [".claude-plugin/plugin.json", "skills/hello/SKILL.md"]
    assert not (root / "evals").resolve().is_relative_to(copy.resolve())


def test_the_lock_and_the_default_results_live_in_the_eval_folder(tmp_path: Path) -> None:
    root = two_cases(tmp_path)
    suite = load_suite(root)
    assert lock_path(suite) == (root / "evals" / "evalkit.lock").resolve()
    assert default_workdir(suite) == (root / "evals" / "evalkit-results").resolve()


def test_git_ignores_the_translated_suite_and_still_sees_the_lock_beside_it(
    tmp_path: Path,
) -> None:
    """Asked of git itself: a plugin repository that commits its eval folder never picks up
    `.evalkit-suite/`, which evalkit rewrites on every load, while the lock still shows."""
    root = two_cases(tmp_path)
    suite = load_suite(root)
    (root / "evals" / "evalkit.lock").write_text("stand-in\n")
    generated = (root / "evals" / ".evalkit-suite").resolve()
    assert suite.root.resolve() == generated and (generated / ".gitignore").is_file()
    git = ["git", "-c", "init.defaultBranch=main", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    shown = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    paths = [line[3:] for line in shown.splitlines()]
    assert "evals/evalkit.lock" in paths and "evals/greets/case.yaml" in paths, paths
    assert not any(".evalkit-suite" in path for path in paths), paths


def test_the_manifest_may_name_another_eval_folder(tmp_path: Path) -> None:
    root = plugin(tmp_path, {"name": "greeter", "experimental": {"evals": "checks"}})
    case_yaml(root / "checks", "greets", GREETS)
    suite = load_suite(root)
    assert [s.id for s in suite.scenarios()] == ["greets"]
    assert lock_path(suite).parent == (root / "checks").resolve()


def test_a_prompt_md_case_with_grader_files_is_read_and_its_prompt_is_the_task(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path)
    llm = "---\ntype: llm\nweight: 1\n---\n\nThe reply greets the team.\n"
    prompt_case(root / "evals", "greets", "max_turns: 10\n", {"criteria": llm})
    (scenario,) = load_suite(root).scenarios()
    assert read_task(scenario) == PROMPT
    assert scenario.scenario.expect["a"]["votes"] == 3


def test_an_unchanged_eval_folder_leaves_the_translated_suite_untouched(tmp_path: Path) -> None:
    root = two_cases(tmp_path)
    first = load_suite(root)
    stamps = {p: p.stat().st_mtime_ns for p in first.root.rglob("*") if p.is_file()}
    second = load_suite(root)
    assert {p: p.stat().st_mtime_ns for p in second.root.rglob("*") if p.is_file()} == stamps


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("execution: [unclosed\n", ("case.yaml:",)),
        ("name: bad\nexecution: {prompt: hi}\n" + LLM, ("schema_version",)),
        ('schema_version: "2.0"\nname: bad\nexecution: {prompt: hi}\n' + LLM,
         ("schema_version", "2.0")),
        ("schema_version: 1\nname: bad\nexecution: {prompt: hi}\n" + LLM, ("schema_version",)),
        ('schema_version: "1.0"\nexecution: {prompt: hi}\n' + LLM, ("name",)),
        ('schema_version: "1.0"\nname: bad\nprompt: hi\n' + LLM, ("execution",)),
        (real("max_turns: 3"), ("execution.prompt",)),
        (real("prompt: hi, timeout_seconds: 2.5"), ("execution.timeout_seconds",)),
        (real("prompt: hi", "runs: 0\n" + LLM), ("runs",)),
        (real("prompt: hi", "graders: [{type: regex, pattern: x}]\n"), ("graders[0]", "name")),
        (real("prompt: hi", "graders: [{name: g, type: regex, pattern: x},"
                            " {name: g, type: regex, pattern: y}]\n"), ("graders", "duplicate")),
        (real("prompt: hi", "graders: [{name: g1, type: smell}]\n"), ("graders[0]", "g1", "type")),
        (real("prompt: hi", "graders: [{name: b1, type: baseline}]\n"), ("b1", "baseline")),
        (real("prompt: hi", "graders: [{name: out, type: file_exists, path: ../../etc/x}]\n"),
         ("out", "path", "escapes")),
        (real("prompt: hi", "graders: [{name: la, type: regex, pattern: 'a(?<=b)'}]\n"),
         ("la", "pattern", "look-around")),
        (real("prompt: hi", "graders: [{name: br, type: regex, pattern: '(a)\\1'}]\n"),
         ("br", "pattern", "back-reference")),
        (real("prompt: hi", "graders: [{name: ng, type: regex, pattern: x, negate: true}]\n"),
         ("ng", "negate")),
        (real("prompt: hi", "graders: [{name: n2, type: regex, pattern: x, match: 'count:2'}]\n"),
         ("n2", "match")),
        (real("prompt: hi", "graders: [{name: tf, type: regex, pattern: x, target: files}]\n"),
         ("tf", "target")),
        (real("prompt: hi", "graders: [{name: fo, type: llm, criteria: ok, focus: trace}]\n"),
         ("fo", "focus")),
        (real("prompt: hi", "graders: [{name: ot, type: tool_order, tools: [Read, Write]}]\n"),
         ("ot", "before")),
        (real("prompt: hi", "graders: [{name: m0, type: tool_used, tool: Skill, max: 0}]\n"),
         ("m0", "max", "min")),
        (real("prompt: hi", "context: {history_file: h.jsonl}\n" + LLM),
         ("context.history_file",)),
        (real("prompt: hi", "plugins: [../other]\n" + LLM), ("plugins",)),
        (real("prompt: hi, append_system_prompt: be brief"), ("execution.append_system_prompt",)),
    ],
    ids=["malformed", "no-schema-version", "newer-schema", "numeric-schema", "no-name",
         "no-execution", "no-prompt", "float-timeout", "runs-0", "grader-name", "duplicate",
         "unknown-type", "baseline", "glob", "lookaround", "backref", "negate", "count",
         "files-target", "llm-focus", "order-list", "max-below-min", "history", "plugins",
         "system-prompt"],
)
def test_a_case_evalkit_cannot_honour_is_refused_in_one_line_naming_file_and_field(
    tmp_path: Path, text: str, names: tuple[str, ...]
) -> None:
    root = plugin(tmp_path)
    source = case_yaml(root / "evals", "bad", text)
    with pytest.raises(ConfigError) as caught:
        load_suite(root)
    message = str(caught.value)
    assert "\n" not in message
    assert str(source) in message
    missing = [n for n in names if n not in message]
    assert not missing, f"the refusal does not name {missing}"
    assert not (root / "evals" / ".evalkit-suite").exists()


def test_a_case_whose_oracle_cannot_be_generated_needs_a_sidecar_calibration(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path)
    text = real("prompt: hi", "graders: [{name: shape, type: regex, pattern: 'h[ae]llo'}]\n")
    case_yaml(root / "evals", "shape", text)
    with pytest.raises(ConfigError) as caught:
        load_suite(root)
    assert "shape" in str(caught.value) and "evalkit.yaml" in str(caught.value)
    (root / "evals" / "shape" / "evalkit.yaml").write_text(
        "calibration:\n  oracle:\n    - final: hallo\n"
    )
    assert [s.id for s in load_suite(root).scenarios()] == ["shape"]


def test_a_folder_that_is_neither_a_suite_nor_a_plugin_with_evals_is_refused(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path)
    with pytest.raises(ConfigError):
        load_suite(root)


def test_launch_settings_become_the_scenario_s_own_limits_and_tools(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    case_yaml(
        root / "evals",
        "limited",
        real("prompt: hi, max_turns: 4, timeout_seconds: 30, allowed_tools: [Read, Bash, Skill],"
             " disallowed_tools: [Bash]"),
    )
    case_yaml(
        root / "evals",
        "no-agents",
        real("prompt: hi, disallowed_tools: [Agent]"),
    )
    launches = {s.id: s.scenario.launch for s in load_suite(root).scenarios()}
    limited = launches["limited"]
    assert (limited.max_turns, limited.timeout, limited.tools) == (4, 30.0, ["Read", "Skill"])
    tools = launches["no-agents"].tools
    assert tools is not None and "Agent" not in tools and "Write" in tools


SCAFFOLD = "printf 'hello\\n' > NOTES.md\nmkdir -p src && printf 'x = 1\\n' > src/app.py\n"
WITH_SCAFFOLD = real("prompt: hi", "context: {scaffold_script: scaffold.sh}\n" + LLM)


def scaffolded(root: Path, name: str, script: str) -> Path:
    source = case_yaml(root / "evals", name, WITH_SCAFFOLD)
    (source.parent / "scaffold.sh").write_text(script)
    return source


def test_a_scaffold_script_builds_the_fixture_project_hashed_into_the_lock(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path)
    scaffolded(root, "one", SCAFFOLD)
    scaffolded(root, "two", SCAFFOLD)
    suite = load_suite(root)
    project = suite.fixture_dirs()["project"]
    listed = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert listed == ["NOTES.md", "src/app.py"]
    before = suite.fixture_hashes()["project"]
    (root / "evals" / "one" / "scaffold.sh").write_text(SCAFFOLD + "printf 'y\\n' > Y.md\n")
    (root / "evals" / "two" / "scaffold.sh").write_text(SCAFFOLD + "printf 'y\\n' > Y.md\n")
    assert load_suite(root).fixture_hashes()["project"] != before


def test_a_case_without_context_starts_in_an_empty_project(tmp_path: Path) -> None:
    suite = load_suite(two_cases(tmp_path))
    assert list(suite.fixture_dirs()["project"].iterdir()) == []


def test_a_scaffold_whose_output_differs_between_two_builds_is_refused(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    source = scaffolded(root, "moving", "date +%s%N > stamp.txt\n")
    with pytest.raises(ConfigError) as caught:
        load_suite(root)
    message = str(caught.value)
    assert str(source) in message and "context.scaffold_script" in message
    assert "differs between two builds" in message


def test_cases_with_different_scaffolds_are_refused_naming_the_case(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    scaffolded(root, "first", SCAFFOLD)
    source = scaffolded(root, "second", "printf 'other\\n' > OTHER.md\n")
    with pytest.raises(ConfigError) as caught:
        load_suite(root)
    message = str(caught.value)
    assert str(source) in message and "'second'" in message and "scaffold_script" in message


def test_list_and_a_refusal_on_the_command_line_never_print_a_case_prompt(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.main import app

    root = plugin(tmp_path)
    prompt_case(root / "evals", "greets", "max_turns: 10\n", {
        "criteria": "---\ntype: llm\n---\n\nThe reply greets the team.\n"})
    listed = CliRunner().invoke(app, ["--suite", str(root), "list"])
    assert listed.exit_code == 0
    assert (PROMPT in listed.stdout + listed.stderr) is False
    (root / "evals" / "greets" / "graders" / "smell.md").write_text("---\ntype: smell\n---\n")
    refused = CliRunner().invoke(app, ["--suite", str(root), "list"])
    assert refused.exit_code == 2
    assert len(refused.stderr.strip().splitlines()) == 1
    assert (PROMPT in refused.stdout + refused.stderr) is False


def test_keys_the_source_runner_ignores_are_ignored_here_too(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    case_yaml(root / "evals", "loose", real("prompt: hi, model: haiku, env: {}",
                                            "expected_outcome: ok\nlabel: x\n" + LLM))
    assert [s.id for s in load_suite(root).scenarios()] == ["loose"]


def test_context_in_a_prompt_md_front_matter_is_refused_naming_the_key(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    llm = "---\ntype: llm\n---\n\nThe reply greets the team.\n"
    prompt_case(root / "evals", "greets", "context:\n  scaffold_script: s.sh\n", {"ok": llm})
    with pytest.raises(ConfigError) as caught:
        load_suite(root)
    message = str(caught.value)
    assert "prompt.md" in message and "context" in message and "\n" not in message


def test_a_case_yaml_beside_prompt_md_gives_the_scaffold_and_its_graders_come_first(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path)
    llm = "---\ntype: llm\n---\n\nThe reply greets the team.\n"
    prompt_case(root / "evals", "mixed", "max_turns: 6\nallowed_tools: [Read, Write]\n",
                {"polite": llm})
    folder = root / "evals" / "mixed"
    (folder / "case.yaml").write_text(
        HEAD.format(name="mixed") + "context: {scaffold_script: scaffold.sh}\n"
        "graders: [{name: wrote, type: file_exists, path: NOTES.md}]\n"
    )
    (folder / "scaffold.sh").write_text(SCAFFOLD)
    suite = load_suite(root)
    (scenario,) = suite.scenarios()
    assert read_task(scenario) == PROMPT
    assert (scenario.scenario.launch.max_turns, scenario.scenario.launch.tools) == (
        6, ["Read", "Write"])
    assert [c["reason"] for c in scenario.scenario.expect["a"]["all"]] == ["wrote", "polite"]
    assert (suite.fixture_dirs()["project"] / "NOTES.md").is_file()


def test_prompt_md_and_case_yaml_disallowed_tools_are_joined(tmp_path: Path) -> None:
    root = plugin(tmp_path)
    llm = "---\ntype: llm\n---\n\nThe reply greets the team.\n"
    prompt_case(root / "evals", "both", "disallowed_tools: [Bash]\n", {"polite": llm})
    (root / "evals" / "both" / "case.yaml").write_text(
        HEAD.format(name="both") + "execution: {disallowed_tools: [Agent]}\n")
    (scenario,) = load_suite(root).scenarios()
    tools = scenario.scenario.launch.tools
    assert tools is not None and "Read" in tools
    assert ("Bash" in tools, "Agent" in tools) == (False, False)

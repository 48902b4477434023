"""A plugin's `claude plugin eval` folder loads as a suite: cases as scenarios, the plugin
without its eval folder as the subject, the lock and results inside the eval folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.records.run_ids import default_workdir
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


GREETS = """prompt: Say hello to the team.
runs: 2
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
QUIET = """prompt: What time is it?
graders:
  - name: no-skill
    type: tool_used
    tool: Skill
    max: 0
  - name: no-file
    type: file_exists
    path: "*.txt"
    exists: false
"""


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
        ("prompt: [unclosed\n", ("case.yaml:",)),
        ("prompt: hi\nrunz: 3\ngraders: [{type: llm, criteria: ok}]\n", ("runz",)),
        ("prompt: hi\ngraders: [{name: g1, type: smell}]\n", ("graders[0]", "g1", "type")),
        ("prompt: hi\ngraders: [{name: b1, type: baseline}]\n", ("b1", "baseline")),
        (
            "prompt: hi\ngraders: [{name: out, type: file_exists, path: ../../etc/x}]\n",
            ("out", "path", "escapes"),
        ),
        (
            "prompt: hi\ngraders: [{name: la, type: regex, pattern: 'a(?<=b)'}]\n",
            ("la", "pattern", "look-around"),
        ),
        (
            "prompt: hi\ngraders: [{name: br, type: regex, pattern: '(a)\\1'}]\n",
            ("br", "pattern", "back-reference"),
        ),
        (
            "prompt: hi\ncontext: {history_file: h.jsonl}\ngraders: [{type: llm, criteria: ok}]\n",
            ("context.history_file",),
        ),
    ],
    ids=["malformed", "unknown-field", "unknown-type", "baseline", "glob", "lookaround",
         "backref", "history"],
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
    text = "prompt: hi\ngraders: [{name: shape, type: regex, pattern: 'h[ae]llo'}]\n"
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
        "prompt: hi\nmax_turns: 4\ntimeout_seconds: 30\nallowed_tools: [Read, Bash, Skill]\n"
        "disallowed_tools: [Bash]\ngraders: [{type: llm, criteria: ok}]\n",
    )
    case_yaml(
        root / "evals",
        "no-agents",
        "prompt: hi\ndisallowed_tools: [Agent]\ngraders: [{type: llm, criteria: ok}]\n",
    )
    launches = {s.id: s.scenario.launch for s in load_suite(root).scenarios()}
    limited = launches["limited"]
    assert (limited.max_turns, limited.timeout, limited.tools) == (4, 30.0, ["Read", "Skill"])
    tools = launches["no-agents"].tools
    assert tools is not None and "Agent" not in tools and "Write" in tools


SCAFFOLD = "printf 'hello\\n' > NOTES.md\nmkdir -p src && printf 'x = 1\\n' > src/app.py\n"
WITH_SCAFFOLD = "prompt: hi\ncontext: {scaffold_script: scaffold.sh}\n" \
    "graders: [{type: llm, criteria: ok}]\n"


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

"""The adr-discrimination suite's content: scenarios, fixture, plugin, and its self-test.

Task blocks are held out: nothing here prints one or asserts on its wording. The
leak check reads them only to compare, and reports file names, never text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalkit.checkers.adr_discrimination.reference import (
    NegativeCalibration,
    PositiveCalibration,
)
from evalkit.checkers.adr_discrimination.scoring import PositiveExpect
from evalkit.errors import PrerequisiteError
from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.reference.selftest import self_test
from evalkit.run.prerequisites.claude_cli import find_cli
from evalkit.run.sandbox import TRANSCRIPT, build_sandbox
from evalkit.scoring.decide import decide
from evalkit.scoring.judge import FixedJudge
from evalkit.scoring.topics import topic_matches
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

ROOT = REPO / "suites" / "adr-discrimination"
PROJECT = ROOT / "fixtures" / "project"
PLUGIN = ROOT / "fixtures" / "plugins" / "os-adr"
RUN_IDS = [f"{p}{n}-L{lvl}-execution" for n, lvl in ((1, 1), (2, 2), (3, 3)) for p in "PN"]
RESERVE_IDS = [f"{p}{n}-L{lvl}-notifications" for n, lvl in ((4, 1), (5, 2), (6, 3)) for p in "PN"]
GOVERNING = {"P1": {"0002"}, "P2": {"0005"}, "P3": {"0002", "0005", "0006"}}
GOVERNING.update({p: {"0003"} for p in ("P4", "P5", "P6")})


@pytest.fixture(autouse=True)
def _no_judge_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADR_EVAL_JUDGE_CMD", raising=False)


@pytest.fixture(scope="module")
def adr_suite() -> Suite:
    return Suite(ROOT)


def fixture_records() -> dict[str, dict[str, object]]:
    records = {}
    for path in sorted((PROJECT / "docs" / "adr").glob("[0-9][0-9][0-9][0-9]-*.md")):
        front = path.read_text(encoding="utf-8").split("---\n")[1]
        meta = yaml.safe_load(front)
        records[str(meta["id"])] = meta
    return records


def positives(suite: Suite) -> list[tuple[str, PositiveExpect, PositiveCalibration]]:
    return [
        (s.id, suite.checker.expect_for(s), suite.reference.calibration_for(s))
        for s in suite.scenarios("all")
        if s.scenario.polarity == "positive"
    ]


# --------------------------------------------------------------------------- loading


def test_the_suite_loads_with_all_twelve_scenarios(adr_suite: Suite) -> None:
    assert adr_suite.name == "adr-discrimination"
    assert adr_suite.checker.name == "adr-discrimination"
    assert sorted(s.id for s in adr_suite.scenarios("run")) == sorted(RUN_IDS)
    assert sorted(s.id for s in adr_suite.scenarios("reserve")) == sorted(RESERVE_IDS)
    for s in adr_suite.scenarios("all"):
        polarity = "positive" if s.id.startswith("P") else "negative"
        assert s.scenario.polarity == polarity, s.id
        assert s.scenario.level == s.id.split("-")[1], s.id


def test_the_config_loads_the_plugin_and_requires_its_hook(adr_suite: Suite) -> None:
    config = adr_suite.config
    assert list(adr_suite.fixture_dirs()) == ["project"]
    assert adr_suite.plugin_dirs() == [PLUGIN.resolve()]
    assert [(h.event, h.output_contains) for h in config.required_hooks] == [
        ("SessionStart", "os-adr")
    ]
    assert config.judge.command_env == [
        "EVALKIT_JUDGE_CMD",
        "ADR_EVAL_JUDGE_CMD",
        "ADR_EVAL_C_JUDGE_CMD",
    ]
    assert config.judge.model == "haiku" and adr_suite.rubric_path.is_file()


def test_the_original_evals_judge_variable_is_honoured(
    adr_suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.run.judges import default_judge
    from evalkit.scoring.judge import CommandJudge

    monkeypatch.setenv("ADR_EVAL_C_JUDGE_CMD", "echo YES")
    judge = default_judge(adr_suite)
    assert isinstance(judge, CommandJudge) and judge.command == "echo YES"


def test_each_premise_marker_is_in_its_file(adr_suite: Suite) -> None:
    for s in adr_suite.scenarios("all"):
        path = ROOT / s.scenario.premise.file
        assert path.is_file(), f"{s.id}: {s.scenario.premise.file}"
        assert s.scenario.premise.marker in path.read_text(encoding="utf-8"), s.id


def test_scenario_prose_has_the_sections_in_order(adr_suite: Suite) -> None:
    headings = ["## Premise", "## Why its pair is equally tempting", "## Conformance dry-run"]
    for s in adr_suite.scenarios("all"):
        found = [h for h in re.findall(r"^## .+$", s.prose, re.MULTILINE)]
        assert found == headings, s.id


# --------------------------------------------------------------------------- expectations


def test_governing_ids_exist_and_are_accepted() -> None:
    records = fixture_records()
    assert sorted(records) == ["0001", "0002", "0003", "0004", "0005", "0006"]
    assert records["0001"]["status"] == "Superseded"
    assert records["0001"]["superseded_by"] == ["0002"]
    assert records["0002"]["supersedes"] == ["0001"]
    for meta in records.values():
        assert {"id", "title", "status", "date", "affected_paths"} <= set(meta)


def test_positive_expectations_point_at_real_records(adr_suite: Suite) -> None:
    records = fixture_records()
    for sid, expect, _ in positives(adr_suite):
        assert set(expect.governing) == GOVERNING[sid[:2]], sid
        for rid in expect.governing:
            assert records[rid]["status"] == "Accepted", f"{sid}: {rid}"
        assert expect.distractors, f"{sid}: cite-distractor needs at least one distractor"
        for rid in expect.distractors:
            assert rid in records, f"{sid}: {rid}"


def test_topic_patterns_match_their_own_record_and_no_other(adr_suite: Suite) -> None:
    cases = positives(adr_suite)
    for sid, expect, cal in cases:
        assert topic_matches(expect.topic_patterns, cal.adr.path, cal.adr.text()), sid
        for other, _, other_cal in cases:
            if other != sid:
                hit = topic_matches(expect.topic_patterns, other_cal.adr.path, other_cal.adr.text())
                assert not hit, f"{sid}'s patterns match {other}'s record"


def test_calibration_records_are_new_record_files(adr_suite: Suite) -> None:
    pattern = re.compile(r"^docs/adr/\d{4}-[a-z0-9-]+\.md$")
    for s in adr_suite.scenarios("all"):
        cal = adr_suite.reference.calibration_for(s)
        assert pattern.match(cal.adr.path), s.id
        assert not (PROJECT / cal.adr.path).exists(), s.id
        assert cal.adr.text().startswith("---\n"), s.id
        meta = yaml.safe_load(cal.adr.text().split("---\n")[1])
        assert meta["id"] == cal.adr.path.split("/")[-1][:4], s.id


def test_negative_edits_only_create_files(adr_suite: Suite) -> None:
    for s in adr_suite.scenarios("all"):
        cal = adr_suite.reference.calibration_for(s)
        if isinstance(cal, NegativeCalibration):
            for edit in cal.edits:
                assert not (PROJECT / edit.path).exists(), f"{s.id}: {edit.path} exists"


def test_ideal_replies_cite_and_bait_replies_do_not_propose(adr_suite: Suite) -> None:
    """The oracle passes by citation, never by the judge."""
    from evalkit.checkers.adr_discrimination.scoring import cited_ids

    for sid, expect, cal in positives(adr_suite):
        assert set(cited_ids(cal.reply, expect.governing)), sid


def test_no_task_text_appears_outside_its_own_section(adr_suite: Suite) -> None:
    files = [p for p in ROOT.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in files}
    for s in adr_suite.scenarios("all"):
        task = " ".join(read_task(s).split())
        windows = {task[i : i + 60] for i in range(0, max(1, len(task) - 60), 20)}
        leaks = []
        for path, text in texts.items():
            flat = " ".join(text.split())
            if path == s.path:
                flat = flat.replace(task, "", 1)
            if any(w in flat for w in windows):
                leaks.append(path.relative_to(ROOT).as_posix())
        assert not leaks, f"{s.id}: task text found in {leaks}"


# --------------------------------------------------------------------------- fixture


def _copy_project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _unittest(project: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "unittest", "-q"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_fixture_projects_own_tests_pass(tmp_path: Path) -> None:
    done = _unittest(_copy_project(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"Ran [1-9]\d* tests?", done.stderr)


def test_negative_calibration_edits_are_working_code(adr_suite: Suite, tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    added = 0
    for s in adr_suite.scenarios("all"):
        cal = adr_suite.reference.calibration_for(s)
        for edit in cal.edits:
            (project / edit.path).parent.mkdir(parents=True, exist_ok=True)
            (project / edit.path).write_text(edit.content, encoding="utf-8")
            added += 1
    assert added >= 3
    done = _unittest(project)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_fixture_has_no_build_or_cache_leftovers() -> None:
    leftovers = [
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if p.name in ("__pycache__", ".pytest_cache", ".git") or p.suffix in (".pyc", ".db")
    ]
    assert leftovers == []


def test_claude_md_carries_both_find_triggers() -> None:
    text = (PROJECT / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.count("/os-adr:find") >= 2
    assert "architecture-level choice" in text
    assert "first edit to any existing source or config file" in text


# --------------------------------------------------------------------------- plugin


def _tool(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PLUGIN / "bin" / name), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_plugin_manifest_skills_and_hook_are_in_place() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "os-adr"
    for skill in ("find", "create"):
        text = (PLUGIN / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("---\n")[1])
        assert meta["name"] == skill and meta["description"]
        assert "${CLAUDE_PLUGIN_ROOT}/bin/adr-" in text
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())
    command = hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == '"${CLAUDE_PLUGIN_ROOT}/hooks/session-start.sh"'
    for rel in ("bin/adr-find", "bin/adr-new", "hooks/session-start.sh"):
        assert os.access(PLUGIN / rel, os.X_OK), rel


def test_the_session_start_note_names_both_skills(tmp_path: Path) -> None:
    notes = {}
    for cwd in (PROJECT, tmp_path):
        done = subprocess.run(
            [str(PLUGIN / "hooks" / "session-start.sh")],
            cwd=cwd,
            capture_output=True,
            text=True,
            env={"PATH": os.environ["PATH"]},
            timeout=30,
        )
        assert done.returncode == 0
        for needle in ("os-adr", "os-adr:find", "os-adr:create"):
            assert needle in done.stdout
        notes[cwd] = done.stdout
    assert "(6 records)" in notes[PROJECT]


def test_adr_find_by_keyword_and_by_path(tmp_path: Path) -> None:
    by_word = _tool("adr-find", "--root", str(PROJECT), "timeout", "backoff", cwd=tmp_path)
    assert by_word.returncode == 0
    ids = re.findall(r"^(\d{4})\s", by_word.stdout, re.MULTILINE)
    assert ids[:2] == ["0002", "0001"], "the record in force comes first"
    assert "Superseded by 0002" in by_word.stdout
    by_path = _tool("adr-find", "--path", "taskq/review.py", cwd=PROJECT)
    assert re.findall(r"^(\d{4})\s", by_path.stdout, re.MULTILINE) == ["0003", "0005"]
    nothing = _tool("adr-find", "kubernetes", cwd=PROJECT)
    assert nothing.returncode == 0 and "no matching ADRs" in nothing.stdout
    missing = _tool("adr-find", "x", cwd=tmp_path)
    assert missing.returncode == 2
    assert not list(PLUGIN.rglob("__pycache__")), "the shared plugin folder must stay clean"


def test_adr_new_numbers_indexes_and_supersedes(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    done = _tool(
        "adr-new",
        "--title",
        "Give exports more time",
        "--affected-path",
        "taskq/execution.py",
        "--supersedes",
        "0002",
        "--date",
        "2026-03-10",
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    rel = done.stdout.strip()
    assert rel == "docs/adr/0007-give-exports-more-time.md"
    meta = yaml.safe_load((project / rel).read_text().split("---\n")[1])
    assert meta["id"] == "0007" and meta["status"] == "Proposed"
    assert meta["supersedes"] == ["0002"] and meta["affected_paths"] == ["taskq/execution.py"]
    old = fixture_records_at(project)["0002"]
    assert old["status"] == "Superseded" and old["superseded_by"] == ["0007"]
    index = (project / "docs" / "adr" / "README.md").read_text()
    assert "| [0007](0007-give-exports-more-time.md) | Give exports more time | Proposed |" in index
    assert "Superseded by 0007" in index
    assert index.startswith("# Architecture decision records")
    assert _tool("adr-new", "--title", "x", "--supersedes", "0042", cwd=project).returncode == 2


def fixture_records_at(project: Path) -> dict[str, dict[str, object]]:
    out = {}
    for path in sorted((project / "docs" / "adr").glob("[0-9]*.md")):
        meta = yaml.safe_load(path.read_text().split("---\n")[1])
        out[str(meta["id"])] = meta
    return out


def test_the_index_matches_the_records() -> None:
    index = (PROJECT / "docs" / "adr" / "README.md").read_text(encoding="utf-8")
    for rid, meta in fixture_records().items():
        assert f"| [{rid}](" in index and str(meta["title"]) in index


# --------------------------------------------------------------------------- self-test


# A whole-suite calibration, in process: `make calibrate-suites` runs it (CI does too).
@pytest.mark.slow
def test_self_test_gets_every_cell_as_designed(adr_suite: Suite, tmp_path: Path) -> None:
    cells = self_test(adr_suite, tmp_path / "sandboxes")
    assert {c.scenario for c in cells} == set(RUN_IDS + RESERVE_IDS)
    wrong = [
        f"{c.scenario}/{c.case}: {c.verdict.verdict} {';'.join(c.verdict.reasons)}"
        for c in cells
        if not c.ok
    ]
    assert not wrong, "\n".join(wrong)
    names = {c.case for c in cells}
    assert {"oracle", "always-create", "never-consult", "cite-distractor"} <= names
    assert {"cut-before-result", "is-error-result", "hook-missing", "bash-creates-adr"} <= names
    assert {"propose-judge-yes", "propose-judge-no", "propose-judge-garbage"} <= names


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    evalkit = Path(sys.executable).parent / "evalkit"
    return subprocess.run(
        [str(evalkit), "--suite", str(ROOT), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_the_cli_lists_both_sets() -> None:
    done = _cli("list", "--set", "all", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert sorted(r["id"] for r in rows) == sorted(RUN_IDS + RESERVE_IDS)
    assert {r["set"] for r in rows} == {"run", "reserve"}


# --------------------------------------------------------------------------- real CLI


@pytest.mark.e2e
def test_the_real_cli_fires_the_hook_and_reaches_the_tools(
    adr_suite: Suite, tmp_path: Path
) -> None:
    """Measured: the hook runs, both skills load, ${CLAUDE_PLUGIN_ROOT} is expanded in a skill
    body but not set for Bash, and the plugin's bin/ is on the Bash tool's PATH."""
    try:
        cli = find_cli()
    except PrerequisiteError as exc:
        pytest.skip(str(exc))
    sandbox = tmp_path / "sb"
    scenario = adr_suite.resolve("P1")
    build_sandbox(adr_suite, scenario, sandbox)
    probe = 'echo "root=${CLAUDE_PLUGIN_ROOT:-unset}"; adr-find --root . --path taskq/queue.py'
    script = Script(
        steps=[
            Step(blocks=[ToolUseBlock(name="Skill", input={"skill": "os-adr:find"})]),
            Step(blocks=[ToolUseBlock(name="Bash", input={"command": probe})]),
        ],
        final_text="ADR 0002 applies here.",
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"),
        "IS_SANDBOX": "1",
        "ANTHROPIC_API_KEY": "sk-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "2",
    }
    with ScriptedServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.base_url
        command = [
            str(cli), "-p", "probe", "--model", "probe-model",
            "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
            "--no-session-persistence", "--setting-sources", "project",
            "--plugin-dir", str(PLUGIN.resolve()),
        ]  # fmt: skip
        done = subprocess.run(
            command,
            cwd=sandbox / "project",
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
        )
    (sandbox / TRANSCRIPT).write_text(done.stdout, encoding="utf-8")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    hook = [e for e in events if e.get("subtype") == "hook_response"]
    assert hook and hook[0]["outcome"] == "success" and "os-adr" in hook[0]["output"]
    init = next(e for e in events if e.get("subtype") == "init")
    assert {"os-adr:find", "os-adr:create"} <= set(init["skills"])
    skill_body = next(
        block["text"]
        for e in events
        if e.get("type") == "user" and e.get("isSynthetic")
        for block in e["message"]["content"]
        if block.get("type") == "text"
    )
    assert f"{PLUGIN.resolve()}/bin/adr-find" in skill_body
    bash = [
        block
        for e in events
        if e.get("type") == "user"
        for block in e["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ][-1]
    assert "root=unset" in str(bash["content"]) and "0002  Accepted" in str(bash["content"])
    transcript = parse_lines(done.stdout.splitlines())
    verdict = decide(adr_suite.instrument(scenario), sandbox, transcript, "probe", FixedJudge("NO"))
    assert verdict.verdict == "PASS", verdict.reasons
    assert "A-via:tool:adr-find" in verdict.reasons


def test_the_written_hypotheses_are_expected_bars_per_level_and_tier() -> None:
    bars = Suite(ROOT).config.expected
    for tier in ("sonnet", "claude-haiku-4-5"):
        for polarity in ("positive", "negative"):
            assert bars["L1"].for_model(tier, polarity) == (0.8, None)
    assert bars["L2"].for_model("sonnet", "negative") == (0.8, None)
    assert bars["L2"].for_model("haiku", "positive") == (None, None)
    assert bars["L3"].for_model("haiku", "negative") == (None, 0.8)
    assert bars["L3"].for_model("sonnet", "positive") == (None, None)
    assert all(
        bar.for_model("policy:oracle", polarity) == (None, None)
        for bar in bars.values()
        for polarity in ("positive", "negative")
    )

"""`evalkit init`: each template is a working rules suite the moment it is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.cli.main import app
from evalkit.errors import ConfigError, RefusedError
from evalkit.models import JudgeRecord
from evalkit.scoring.decide import decide
from evalkit.scoring.judge import FixedJudge, Judge
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite
from evalkit.suite.lock import drift, freeze
from evalkit.suite.scaffold import TEMPLATES, init_suite
from evalkit.suite.schemas import (
    CONFIG_SCHEMA,
    EDITOR_LINE,
    FRONT_MATTER_SCHEMA,
    SCHEMA_FOLDER,
    config_schema,
    front_matter_schema,
)
from evalkit.suite.task import read_task
from tests.own_tasks import own_tasks

pytestmark = pytest.mark.heavy


class _Refuses(Judge):
    def ask(self, prompt: str) -> JudgeRecord:
        raise AssertionError("the judge must not be asked")


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(RefusedError, match="not empty"):
        init_suite(tmp_path, "blank")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_init_names_the_templates_it_knows(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="blank, vault-write, adr"):
        init_suite(tmp_path / "x", "nope")


def test_the_command_names_next_steps_and_never_prints_a_task(tmp_path: Path) -> None:
    dest = tmp_path / "mine"
    done = CliRunner().invoke(app, ["init", str(dest), "--template", "adr"])
    assert done.exit_code == 0, done.output
    assert "rewrite every one before measuring" in done.output
    assert "evalkit suite freeze" in done.output
    steps = [line for line in done.output.splitlines() if line[:1].isdigit()]
    assert steps[0].startswith(f"1. cd {dest}:"), steps[0]
    for scenario in Suite(dest).scenarios("all"):
        for line in read_task(scenario).splitlines():
            if len(line.strip()) > 20:
                assert line.strip() not in done.output
    again = CliRunner().invoke(app, ["init", str(dest)])
    assert again.exit_code == 2


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_s_next_steps_go_there_and_its_offline_first_command_passes(
    tmp_path: Path, template: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALKIT_SUITE", raising=False)
    done = CliRunner().invoke(app, ["init", "my eval", "--template", template])
    steps = [line for line in done.output.splitlines() if line[:1].isdigit()]
    assert steps[0].startswith("1. cd 'my eval':"), steps[0]
    first = steps[1].removeprefix("2. ").split(":")[0]
    assert first == "evalkit self-test" and "offline" in steps[1], steps[1]
    named = re.findall(r"fixtures/\S+/", steps[2])
    assert any("/plugins/" in name for name in named), steps[2]
    assert all((tmp_path / "my eval" / name).is_dir() for name in named), steps[2]
    written = {p.name for p in (tmp_path / "my eval" / "fixtures").iterdir()} - {"plugins"}
    assert {name.split("/")[1] for name in named} - {"plugins"} == written
    suite = Suite(tmp_path / "my eval")
    assert suite.checker.name == "rules"
    assert {s.scenario.set for s in suite.scenarios("all")} == {"run", "reserve"}
    monkeypatch.chdir(tmp_path / "my eval")
    proved = CliRunner().invoke(app, first.split()[1:])
    assert proved.exit_code == 0 and "cells as designed" in proved.stdout, proved.exit_code
    cases = {line.split()[2] for line in proved.stdout.splitlines() if line.startswith("ok ")}
    assert {"oracle", "always-act", "never-act", "hook-missing", "oracle-then-act"} <= cases


def test_the_stand_in_plugin_is_whole(tmp_path: Path) -> None:
    init_suite(tmp_path / "s", "blank")
    plugin = tmp_path / "s" / "fixtures" / "plugins" / "my-plugin"
    assert (plugin / ".claude-plugin" / "plugin.json").is_file()
    assert (plugin / "hooks" / "session-start.sh").stat().st_mode & 0o111


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_pattern_re2_refuses_names_the_file_and_field(tmp_path: Path) -> None:
    init_suite(tmp_path / "s", "adr")
    _edit(tmp_path / "s" / "evalkit.yaml", "bash: '\\bdocs/adr\\b'", "bash: '(docs)/\\1'")
    with pytest.raises(ConfigError) as caught:
        Suite(tmp_path / "s")
    message = str(caught.value)
    assert "evalkit.yaml" in message and "checker.options.positive.a" in message
    assert "RE2" in message


def test_a_scenario_whose_act_cannot_be_generated_must_list_it(tmp_path: Path) -> None:
    init_suite(tmp_path / "s", "adr")
    path = tmp_path / "s" / "scenarios" / "P1-L1-prices.md"
    text = path.read_text()
    path.write_text(text[: text.index("  act:")] + text[text.index("---\n\n## Premise") :])
    with pytest.raises(ConfigError, match=r"P1-L1-prices.md: calibration.act: cannot be generated"):
        Suite(tmp_path / "s").scenarios("all")


def test_a_scenario_may_replace_a_rule_and_must_have_one(tmp_path: Path) -> None:
    init_suite(tmp_path / "s", "blank")
    _edit(
        tmp_path / "s" / "evalkit.yaml",
        "    positive:                        # a positive PASSes when a (and b, if given) hold\n"
        "      a:\n        file: {changed: CHANGELOG.md}\n        reason: changelog-entry\n",
        "",
    )
    with pytest.raises(ConfigError, match=r"P1-L1-greeting.md: expect.a: no rule"):
        Suite(tmp_path / "s").scenarios("all")


def _played(suite: Suite, tmp_path: Path, scenario: str, case: SelfTestCase) -> Path:
    from evalkit.reference.selftest import run_case

    run_case(suite, suite.resolve(scenario), case, tmp_path / "sbx")
    return tmp_path / "sbx" / suite.resolve(scenario).id / case.name


def test_no_judge_is_asked_once_a_mechanical_condition_decided(tmp_path: Path) -> None:
    init_suite(tmp_path / "s", "adr")
    suite = Suite(tmp_path / "s")
    never = suite.reference.plan_policy("never-act", suite.resolve("P1"))
    sandbox = _played(suite, tmp_path, "P1", SelfTestCase("idle", never.script, never.expect))
    sf = suite.resolve("P1")
    transcript = read_transcript(sandbox / "transcript.jsonl")
    verdict = decide(suite.instrument(sf), sandbox, transcript, "m", _Refuses())
    assert (verdict.verdict, verdict.axis_a, verdict.axis_b) == ("FAIL", "A:FAIL", "B:n/a")
    assert verdict.judge is None


def test_the_judge_decides_when_nothing_mechanical_did(tmp_path: Path) -> None:
    init_suite(tmp_path / "s", "vault-write")
    suite = Suite(tmp_path / "s")
    never = suite.reference.plan_policy("never-act", suite.resolve("P1"))
    idle = SelfTestCase("idle", never.script, Expectation("FAIL"))
    sandbox = _played(suite, tmp_path, "P1", idle)
    sf = suite.resolve("P1")
    transcript = read_transcript(sandbox / "transcript.jsonl")
    offered = decide(suite.instrument(sf), sandbox, transcript, "m", FixedJudge("YES"))
    assert (offered.verdict, offered.reasons) == ("PASS", ["A-via:note-offered"])
    assert offered.judge is not None and offered.judge.answer == "YES"
    garbled = decide(suite.instrument(sf), sandbox, transcript, "m", FixedJudge("perhaps"))
    assert garbled.verdict == "ERROR" and garbled.reasons[0].startswith("judge-error:")


def _init(dest: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, ["init", str(dest)], env={"COLUMNS": "200"})
    return result.exit_code, result.stderr.strip().splitlines()


def test_init_under_a_file_is_one_line_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x\n")
    code, err = _init(tmp_path / "afile" / "suite")
    assert code == 2 and len(err) == 1 and str(tmp_path / "afile" / "suite") in err[0], err
    assert (tmp_path / "afile").read_text() == "x\n"


def test_init_onto_a_file_is_one_line_saying_so(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x\n")
    code, err = _init(tmp_path / "afile")
    assert code == 2 and len(err) == 1 and "not a folder" in err[0], err
    assert (tmp_path / "afile").read_text() == "x\n"


def test_init_where_nothing_can_be_written_is_one_line(locked_folder: Path) -> None:
    for dest in (locked_folder / "suite", locked_folder / "deeper" / "suite"):
        code, err = _init(dest)
        assert code == 2 and len(err) == 1 and str(dest) in err[0], err


def test_the_blank_templates_observed_script_example_loads_once_uncommented(
    tmp_path: Path,
) -> None:
    root = init_suite(tmp_path / "s", "blank").root
    config = root / "evalkit.yaml"
    text = config.read_text()
    example = [
        "# observe: [bin/test]",
        "      # b:\n      #   ran: {script: bin/test, ok: true}",
        '      #   after: {last: {file: {written: "*.py"}}}',
        "      #   reason: checks-after-change",
    ]
    for commented in example:
        assert commented in text
        text = text.replace(commented, commented.replace("# ", ""), 1)
    config.write_text(text)
    (root / "fixtures" / "project" / "bin").mkdir()
    (root / "fixtures" / "project" / "bin" / "test").write_text("#!/bin/sh\nexit 0\n")
    suite = Suite(root)
    assert suite.config.observe == ["bin/test"]
    names = [p.name for p in suite.reference.policies]
    assert names[-2:] == ["checks-first", "checks-from-subfolder"]


@pytest.mark.parametrize("template", TEMPLATES)
def test_init_writes_the_schemas_its_config_points_an_editor_at(
    tmp_path: Path, template: str
) -> None:
    made = init_suite(tmp_path / "s", template)
    first = (made.root / "evalkit.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == EDITOR_LINE
    pointed = made.root / first.split("$schema=", 1)[1]
    assert json.loads(pointed.read_text(encoding="utf-8")) == config_schema()
    front = made.root / SCHEMA_FOLDER / FRONT_MATTER_SCHEMA
    assert json.loads(front.read_text(encoding="utf-8")) == front_matter_schema()
    listed = {(SCHEMA_FOLDER / n).as_posix() for n in (CONFIG_SCHEMA, FRONT_MATTER_SCHEMA)}
    assert listed <= set(made.files)


def test_the_editor_line_never_moves_the_lock(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s", "blank").root
    own_tasks(root)
    lock = freeze(Suite(root))
    config = root / "evalkit.yaml"
    config.write_text(config.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    assert drift(Suite(root), lock) == []


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_offers_the_stock_neighbours_ready_to_uncomment(
    tmp_path: Path, template: str
) -> None:
    init_suite(tmp_path / "suite", template)
    config = tmp_path / "suite" / "evalkit.yaml"
    lines = config.read_text().splitlines()
    offered = ("# neighbours:", "#   - {stock:")
    lines = [line[2:] if line.startswith(offered) else line for line in lines]
    config.write_text("\n".join(lines) + "\n")
    skills = Suite(tmp_path / "suite").skills
    assert skills is not None and "jot:jot" in skills.neighbours
    assert len(skills.neighbours) == 4

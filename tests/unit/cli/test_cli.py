"""The command line: thin, one-line errors with the right exit codes, no tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.cli.app import guarded_call
from evalkit.cli.main import app
from evalkit.reference.selftest import run_case
from evalkit.suite.config import Suite
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

runner = CliRunner()
WIDE = {"COLUMNS": "200"}


def evalkit(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--suite", str(REPO), *args], env=WIDE)
    return result.exit_code, result.stdout, result.stderr


def fabricated(suite: Suite, tmp_path: Path, scenario: str, policy: str) -> Path:
    plan = suite.reference.plan_policy(policy, suite.resolve(scenario))
    case = SelfTestCase(policy, plan.script, Expectation("PASS"), plan.judge_answer)
    run_case(suite, suite.resolve(scenario), case, tmp_path)
    return tmp_path / suite.resolve(scenario).id / policy


def test_help_lists_every_command_and_where_its_example_is() -> None:
    code, out, _ = evalkit("--help")
    assert code == 0
    assert "COMMAND --help" in out
    for name in (
        "list",
        "sandbox",
        "run",
        "check",
        "self-test",
        "calibrate",
        "verify",
        "grid",
        "report",
        "suite",
        "results",
    ):
        assert f"  {name} " in out, name


def test_list_shows_the_run_set_by_default_and_both_on_request() -> None:
    code, out, _ = evalkit("list")
    assert code == 0 and "P1-L1-reporting" in out and "P4-L1-delivery" not in out
    code, out, _ = evalkit("list", "--set", "all")
    assert "N6-L3-delivery" in out and "reserve" in out


@pytest.mark.parametrize(
    ("policy", "scenario", "code", "word"),
    [("oracle", "P1", 0, "PASS"), ("always-write", "N1", 1, "FAIL")],
)
def test_check_exits_0_on_pass_and_1_on_fail(
    suite: Suite, tmp_path: Path, policy: str, scenario: str, code: int, word: str
) -> None:
    sandbox = fabricated(suite, tmp_path, scenario, policy)
    got, out, _ = evalkit("check", str(sandbox))
    assert (got, out.split()[0]) == (code, word)


def test_check_exits_3_on_a_broken_transcript_and_appends_an_error_row(
    suite: Suite, tmp_path: Path
) -> None:
    sandbox = fabricated(suite, tmp_path / "s", "N2", "oracle")
    (sandbox / "transcript.jsonl").write_text("garbage\n")
    results = tmp_path / "results.tsv"
    code, out, _ = evalkit("check", "N2", str(sandbox), "--tsv", "haiku", "--results", str(results))
    assert code == 3
    assert out.split("\t")[:5] == ["N2-L2-reporting", "haiku", "A:ERROR", "B:ERROR", "ERROR"]
    assert results.read_text().count("\n") == 2


def test_check_json_carries_a_schema_version(suite: Suite, tmp_path: Path) -> None:
    sandbox = fabricated(suite, tmp_path, "P2", "oracle")
    code, out, _ = evalkit("check", str(sandbox), "--json")
    assert code == 0 and '"schema_version": 1' in out


@pytest.mark.parametrize(
    "args",
    [
        ("check", "/nonexistent/sandbox"),
        ("sandbox", "Q9", "/tmp/never-made"),
        ("check", "P1", "/nonexistent/sandbox"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_exit_2(args: tuple[str, ...]) -> None:
    code, out, err = evalkit(*args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("evalkit: ")
    assert "Traceback" not in out + err


def test_a_broken_suite_config_is_one_line_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "evalkit.yaml").write_text("name: x\nchecker: {name: vault-write}\nbogus: 1\n")
    result = runner.invoke(app, ["--suite", str(tmp_path), "list"], env=WIDE)
    assert result.exit_code == 2
    assert "evalkit.yaml:3: bogus: unknown field" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_evalkit_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_DEBUG", "1")
    code, _, err = evalkit("check", "/nonexistent/sandbox")
    assert code == 2 and "Traceback" in err


def test_sandbox_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, _, err = evalkit("sandbox", "P1", str(tmp_path))
    assert code == 2 and "new or empty" in err


def test_run_refuses_a_reserve_scenario_without_reserve(tmp_path: Path) -> None:
    code, _, err = evalkit("run", "P4", "policy:oracle", str(tmp_path / "w"))
    assert code == 2 and "reserve" in err
    assert not (tmp_path / "w").exists()


def test_freeze_then_drift_makes_run_refuse_until_allowed(tmp_path: Path) -> None:
    import shutil

    from tests.unit.suite.test_suite_loading import copy_suite

    root = copy_suite(tmp_path)
    shutil.copytree(REPO / "fixtures", root / "fixtures", dirs_exist_ok=True)
    cli = ["--suite", str(root)]
    assert runner.invoke(app, [*cli, "suite", "freeze"], env=WIDE).exit_code == 0
    (root / "judge-rubric.md").write_text("a tuned rubric\n")
    result = runner.invoke(app, [*cli, "run", "P1", "policy:oracle", str(tmp_path / "w")], env=WIDE)
    assert result.exit_code == 2 and "rubric" in result.stderr
    contaminated = runner.invoke(
        app, [*cli, "suite", "contaminate", "--set", "run", "--note", "tuned"], env=WIDE
    )
    assert contaminated.exit_code == 0
    assert "training-set" in contaminated.stdout


def test_an_unexpected_exception_is_one_line_that_points_at_the_debug_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalkit.cli import cmd_list

    def broken(*_: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(cmd_list.state, "catalog", broken)
    code, out, err = evalkit("list")
    assert code == 70
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "EVALKIT_DEBUG=1" in lines[0] and "KeyError" in lines[0]


def test_a_bad_option_value_is_still_a_usage_error() -> None:
    code, _, err = evalkit("list", "--set", "nope")
    assert code == 2 and "internal error" not in err


@pytest.mark.parametrize(
    "args",
    [
        ("run", "P1", "policy:orcle"),
        ("grid", "--models", "policy:oracle,policy:orcle", "--scenarios", "P1"),
        ("run", "P1", "policy:oracle", "--timeout", "0"),
        ("run", "P1", "policy:oracle", "--timeout", "nan"),
        ("grid", "--models", "policy:oracle", "--timeout", "-1"),
        ("run", "P4", "policy:oracle"),
        ("grid", "--models", "policy:oracle", "--scenarios", "P1", "--run-id", "../../../x"),
        ("run", "P1", "policy:oracle", "--retry-errors", "11"),
        ("grid", "--models", "policy:oracle", "--retry-errors", "1000"),
        ("grid", "--failing-from", "no-such-results-folder", "--models", "policy:oracle"),
        ("run", "P1", "policy:oracle", "--variant", ""),
        ("run", "P1", "policy:oracle", "--variant", "../x"),
        ("grid", "--models", "policy:oracle", "--variants", "suite,,x"),
    ],
)
def test_a_refused_request_is_one_line_exit_2_and_no_plan(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    work = tmp_path / "w"
    where = [str(work)] if args[0] == "grid" else []
    code, _, err = evalkit(*args[:3], *([str(work)] if args[0] == "run" else []), *args[3:], *where)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (work / "plans.jsonl").exists()


def test_ctrl_c_no_command_caught_is_one_line_and_exit_130(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(typer.Exit) as stopped:
        guarded_call(interrupted)
    assert stopped.value.exit_code == 130
    assert capsys.readouterr().err == "evalkit: interrupted\n"


@pytest.mark.parametrize(
    "command",
    [["run", "P1", "policy:oracle"], ["grid", "--models", "policy:oracle", "--scenarios", "P1"]],
)
def test_an_unknown_agent_is_one_line_and_exit_2(command: list[str], tmp_path: Path) -> None:
    code, out, err = evalkit(*command, str(tmp_path / "w"), "--agent", "cursor")
    assert code == 2 and "unknown agent 'cursor'" in err and err.count("\n") == 1
    assert not (tmp_path / "w" / "plans.jsonl").exists()

"""A run or grid that cannot be trusted is refused in the library, before any plan is written."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.models import PlanCell
from evalkit.reference.scripted import POLICIES
from evalkit.run.context import RunContext, record_plan, scratch_root
from evalkit.run.grid import GridCell, failed_rows, run_cells, validate_cells
from evalkit.run.sandbox import contamination_above
from evalkit.run.session import run_scenario
from evalkit.suite.config import Suite


def context(suite: Suite, work: Path, **kw: object) -> RunContext:
    ctx = RunContext(
        suite=suite, workdir=work, results=work / "results.tsv", run_id="r1", scripted=POLICIES
    )
    for key, value in kw.items():
        setattr(ctx, key, value)
    return ctx


def refused_without_a_plan(call: object, work: Path, *words: str) -> str:
    with pytest.raises(EvalkitError) as caught:
        call()  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    assert not (work / "plans.jsonl").exists(), "a refused request wrote a plan"
    return message


def test_a_policy_typo_is_refused_before_a_plan(suite: Suite, tmp_path: Path) -> None:
    ctx = context(suite, tmp_path / "w")
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:orcle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "orcle", "oracle")


def test_a_grid_with_one_bad_policy_runs_nothing(suite: Suite, tmp_path: Path) -> None:
    ctx = context(suite, tmp_path / "w")
    cells = [GridCell(suite.resolve("P1"), m, 1) for m in ("policy:oracle", "policy:orcle")]
    refused_without_a_plan(lambda: run_cells(ctx, cells, 2, "grid"), tmp_path / "w", "orcle")
    assert not (tmp_path / "w" / "manifest.jsonl").exists()


def test_a_reserve_scenario_needs_permission_in_the_library(suite: Suite, tmp_path: Path) -> None:
    ctx = context(suite, tmp_path / "w")
    reserve = suite.scenarios("reserve")[0]
    call = lambda: run_scenario(ctx, reserve, "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", reserve.id, "reserve")


@pytest.mark.parametrize("timeout", [0.0, -5.0, math.nan, math.inf])
def test_a_timeout_that_is_no_limit_is_refused(
    suite: Suite, tmp_path: Path, timeout: float
) -> None:
    ctx = context(suite, tmp_path / "w", timeout=timeout)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "--timeout")


def test_a_judge_timeout_of_zero_is_refused(suite: Suite, tmp_path: Path) -> None:
    ctx = context(suite, tmp_path / "w", judge_timeout=0.0)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "--judge-timeout")


def test_a_workdir_inside_the_suite_fixture_is_refused(suite: Suite, tmp_path: Path) -> None:
    work = suite.fixture_dirs()["vault"] / "results-here"
    ctx = context(suite, work)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, work, "fixture")
    assert not work.exists()


def test_a_workdir_that_is_a_file_is_refused(suite: Suite, tmp_path: Path) -> None:
    work = tmp_path / "a-file"
    work.write_text("not a folder\n")
    ctx = context(suite, work)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    with pytest.raises(EvalkitError, match="is a file"):
        call()
    assert work.read_text() == "not a folder\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission")
def test_a_workdir_that_cannot_be_written_is_refused(suite: Suite, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    ctx = context(suite, locked / "w")
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, locked / "w", "WORKDIR")


def test_a_results_path_that_is_a_folder_is_refused(suite: Suite, tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "results.tsv").mkdir(parents=True)
    ctx = context(suite, work)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, work, "results file is a folder")


def test_a_scratch_folder_under_an_agents_md_is_refused_before_a_plan(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "AGENTS.md").write_text("Always write notes.\n")
    monkeypatch.setenv("EVALKIT_SCRATCH", str(tmp_path / "scratch"))
    ctx = context(suite, tmp_path / "w")
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "AGENTS.md")


@pytest.mark.parametrize(
    "name",
    ["CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", ".claude/rules/style.md", "AGENTS.md"],
)
def test_every_file_the_cli_loads_from_above_is_found(tmp_path: Path, name: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("x\n")
    below = tmp_path / "a" / "b"
    below.mkdir(parents=True)
    assert contamination_above(below) == tmp_path / name


def test_a_scratch_folder_with_a_space_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_SCRATCH", str(tmp_path / "my scratch"))
    with pytest.raises(EvalkitError, match="whitespace"):
        scratch_root()


def test_a_system_temp_folder_with_a_space_gives_way_to_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.delenv("EVALKIT_SCRATCH")
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "my temp"))
    assert not any(c.isspace() for c in str(scratch_root()))


@pytest.mark.parametrize("run_id", ["../../../x", "a/b", "", ".hidden", "-x", "a b", "x" * 65])
def test_a_run_id_that_is_not_a_name_is_refused_before_a_plan(
    suite: Suite, tmp_path: Path, run_id: str
) -> None:
    work = tmp_path / "a" / "b" / "w"
    ctx = context(suite, work, run_id=run_id)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, work, "run id")
    assert all(p in (work, work.parent, work.parent.parent) for p in tmp_path.rglob("*"))


def test_a_run_id_already_holding_the_rep_is_refused_before_a_second_plan(
    suite: Suite, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    ctx = context(suite, work, run_id="r-same")
    record_plan(ctx, [PlanCell(scenario=suite.resolve("P1").id, model="policy:oracle", reps=1)],
                "run P1 policy:oracle --reps 1")  # fmt: skip
    before = (work / "plans.jsonl").read_bytes()
    with pytest.raises(EvalkitError) as caught:
        run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)
    assert "r-same" in str(caught.value) and "\n" not in str(caught.value)
    assert (work / "plans.jsonl").read_bytes() == before, "a refused run id added a plan"


def test_a_run_id_whose_evidence_folder_exists_is_refused_before_a_plan(
    suite: Suite, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    ctx = context(suite, work, run_id="r-left")
    ctx.records.evidence_folder("r-left", suite.resolve("P1").id, "policy:oracle", 1).mkdir(
        parents=True
    )
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, work, "r-left")


def test_a_grid_shard_may_share_its_run_id_with_another_slice(suite: Suite, tmp_path: Path) -> None:
    work = tmp_path / "w"
    ctx = context(suite, work, run_id="r-grid")
    record_plan(ctx, [PlanCell(scenario=suite.resolve("P1").id, model="policy:oracle", reps=1,
                               rep_numbers=[1])], "grid --shard 1/2")  # fmt: skip
    cells = [GridCell(suite.resolve("P1"), "policy:oracle", 2)]
    validate_cells(ctx, cells)


@pytest.mark.parametrize("retries", [11, 1000, -1])
def test_retry_errors_beyond_ten_are_refused_before_a_plan(
    suite: Suite, tmp_path: Path, retries: int
) -> None:
    ctx = context(suite, tmp_path / "w", retry_errors=retries)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "--retry-errors")


def test_an_inner_loop_from_a_folder_that_is_not_there_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EvalkitError, match="--failing-from") as caught:
        failed_rows(tmp_path / "no-such-folder")
    assert "no-such-folder" in str(caught.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalkitError, match="results.tsv"):
        failed_rows(tmp_path / "empty")


def test_a_resumed_rep_whose_plan_names_a_path_as_run_id_is_refused(
    suite: Suite, tmp_path: Path
) -> None:
    ctx = context(suite, tmp_path / "w")
    cells = [GridCell(suite.resolve("P1"), "policy:oracle", 1, run_id="../../outside")]
    refused_without_a_plan(lambda: validate_cells(ctx, cells), tmp_path / "w", "outside")


def test_the_escape_policy_is_refused_unconfined(suite: Suite, tmp_path: Path) -> None:
    ctx = context(suite, tmp_path / "w", unconfined=True)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:escape", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "policy:escape", "confined")


def test_a_confined_real_model_needs_an_api_a_bridge_reaches(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "ftp://gateway.example.com")
    ctx = context(suite, tmp_path / "w")
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "sonnet", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "ftp://", "--unconfined")


def test_a_malformed_planted_regression_is_refused_before_a_plan(
    suite: Suite, tmp_path: Path
) -> None:
    ctx = context(suite, tmp_path / "w")
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:regress-from:2.1:p=2", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "regress-from:VERSION")


def test_a_grid_of_an_unknown_cli_version_is_refused_before_a_plan(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_CLI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("npm_config_offline", "true")
    ctx = context(suite, tmp_path / "w")
    cells = [GridCell(suite.resolve("P1"), "policy:oracle", 1, cli="0.0.1")]
    refused_without_a_plan(lambda: run_cells(ctx, cells, 1, "grid"), tmp_path / "w", "--cli 0.0.1")


def test_an_unknown_agent_is_refused_before_a_plan(suite: Suite, tmp_path: Path) -> None:
    ctx = context(suite, tmp_path / "w", agent="cursor")
    call = lambda: run_scenario(ctx, suite.resolve("P1"), "policy:oracle", 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", "cursor", "codex")


@pytest.mark.parametrize(
    ("agent", "model", "variable"),
    [("codex", "gpt-5", "OPENAI_API_KEY"), ("gemini", "gemini-2.5-pro", "GEMINI_API_KEY")],
)
def test_a_real_model_of_another_agent_without_its_key_is_refused_naming_it(
    agent: str, model: str, variable: str, suite: Suite, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for name in ("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # Claude's key is not the agent's
    ctx = context(suite, tmp_path / "w", agent=agent)
    call = lambda: run_scenario(ctx, suite.resolve("P1"), model, 1)  # noqa: E731
    refused_without_a_plan(call, tmp_path / "w", f"--agent {agent}", model, variable)
    grid = lambda: run_cells(ctx, [GridCell(suite.resolve("P1"), model, 1)], 1, "grid")  # noqa: E731
    refused_without_a_plan(grid, tmp_path / "w", variable)

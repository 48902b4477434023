"""A suite written by `evalkit init` still holding evalkit's placeholder Tasks measures
nothing: it cannot be frozen, and a real model is never run on it; the scripted policies
(self-test, calibrate) still are, as the README promises."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.errors import RefusedError
from evalkit.reference.scripted import POLICIES
from evalkit.run.context import RunContext
from evalkit.run.request import validate_request
from evalkit.suite.config import Suite
from evalkit.suite.scaffold import TEMPLATES, init_suite
from evalkit.suite.task import task_digest
from evalkit.suite.template_tasks import TEMPLATE_TASKS
from tests.own_tasks import own_tasks

pytestmark = pytest.mark.heavy


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_shipped_template_task_is_in_the_table(tmp_path: Path, template: str) -> None:
    init_suite(tmp_path / "s", template)
    scenarios = Suite(tmp_path / "s").scenarios("all")
    missing = [s.path.name for s in scenarios if task_digest(s) not in TEMPLATE_TASKS]
    assert missing == [], "template Tasks whose digest the table lacks (file names only)"


def _freeze(root: Path) -> tuple[int, list[str]]:
    args = ["--suite", str(root), "suite", "freeze"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    return result.exit_code, result.stderr.strip().splitlines()


@pytest.mark.parametrize("template", TEMPLATES)
def test_freeze_refuses_a_template_whose_tasks_are_the_placeholders(
    tmp_path: Path, template: str
) -> None:
    root = init_suite(tmp_path / "s", template).root
    code, err = _freeze(root)
    assert code == 2 and len(err) == 1, err
    assert "/scenarios" in err[0] and ".md" in err[0], err
    assert not (root / "evalkit.lock").exists()


def test_one_placeholder_left_is_enough_to_refuse_and_is_named(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s", "blank").root
    own_tasks(root, only="P")
    own_tasks(root, only="N1")
    [left] = (root / "scenarios-reserve").glob("N2-*.md")
    code, err = _freeze(root)
    assert code == 2 and len(err) == 1 and left.name in err[0], err


def test_a_template_with_its_own_tasks_freezes(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s", "adr").root
    own_tasks(root)
    code, err = _freeze(root)
    assert code == 0, err
    assert (root / "evalkit.lock").is_file()


def _context(root: Path, work: Path) -> RunContext:
    return RunContext(
        suite=Suite(root), workdir=work, results=work / "results.tsv", run_id="r1",
        scripted=POLICIES,
    )  # fmt: skip


def test_a_real_model_is_never_run_on_a_placeholder_task(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s", "vault-write").root
    ctx = _context(root, tmp_path / "w")
    scenarios = ctx.suite.scenarios("run")
    with pytest.raises(RefusedError) as caught:
        validate_request(ctx, scenarios, ["policy:oracle", "sonnet"], [])
    message = str(caught.value)
    assert "\n" not in message and scenarios[0].path.name in message
    assert not (tmp_path / "w" / "plans.jsonl").exists()


def test_the_scripted_policies_still_run_on_the_template(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s", "vault-write").root
    ctx = _context(root, tmp_path / "w")
    ctx.allow_reserve = True  # calibrate --set all
    validate_request(ctx, ctx.suite.scenarios("all"), ["policy:oracle", "policy:never-act"], [])


def test_a_real_model_runs_on_a_scenario_whose_task_is_its_own(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s", "blank").root
    own_tasks(root, only="P1")
    ctx = _context(root, tmp_path / "w")
    validate_request(ctx, [ctx.suite.resolve("P1")], ["sonnet"], [])

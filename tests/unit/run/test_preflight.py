"""Before a real model is paid for, the instrument is proven first: a red self-test refuses a
run or grid on a real model before anything is planned and before any request leaves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.models import Script
from evalkit.records.folder.workdir import Workdir
from evalkit.reference.scripted import Policies
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.run.context import RunContext
from evalkit.run.prerequisites.preflight import prove_instrument
from evalkit.run.rep import RepOutcome
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy


@pytest.fixture
def red_suite(mini_root: Path) -> Path:
    """The mini suite with its positive scenario's topic changed under its calibration note:
    the ideal behaviour no longer scores as designed, so the self-test is red."""
    scenario = mini_root / "scenarios" / "P1-L1-demo.md"
    text = scenario.read_text(encoding="utf-8")
    assert "topic_patterns: [retr]" in text
    scenario.write_text(text.replace("topic_patterns: [retr]", "topic_patterns: [zzqx]"))
    return mini_root


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    """A loopback stand-in for the API a real model name is sent to, with a dummy key: were
    anything launched, it would land here and be counted, never on a real API."""
    with ScriptedServer(Script(final_text="Done.")) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
        monkeypatch.setenv("EVALKIT_JUDGE_CMD", "echo NO")
        yield server


@pytest.mark.parametrize(
    "command",
    [("run", "P1", "sonnet", "{work}"), ("grid", "{work}", "--models", "sonnet,policy:oracle")],
)
def test_a_red_self_test_refuses_a_real_model_before_anything_is_planned(
    red_suite: Path, api: ScriptedServer, tmp_path: Path, command: tuple[str, ...]
) -> None:
    work = tmp_path / "w"
    args = [a.format(work=work) for a in command]
    done = CliRunner().invoke(app, ["--suite", str(red_suite), *args, "--allow-unfrozen"])
    refusals = [line for line in done.stderr.splitlines() if line.startswith("evalkit:")]
    assert done.exit_code == 2 and len(refusals) == 1, done.output
    assert "self-test" in done.stderr and "--skip-preflight" in done.stderr
    assert not (work / "plans.jsonl").exists() and not (work / "results.tsv").exists()
    assert api.requests == [], "a request left for the API"


class NeverProven(Policies):
    """The scripted models, with a self-test that fails the test if it is ever asked for."""

    def self_test(self, suite: Suite) -> tuple[int, int]:
        raise AssertionError("the instrument was proven")


def never_run(*_: object) -> list[RepOutcome]:
    raise AssertionError("an oracle rep ran")


def test_a_run_of_policies_alone_proves_nothing_first(mini_root: Path, tmp_path: Path) -> None:
    suite = Suite(mini_root)
    ctx = RunContext(suite=suite, workdir=tmp_path, results=tmp_path / "r.tsv", run_id="r1",
                     scripted=NeverProven())  # fmt: skip
    models = ["policy:oracle", "policy:always-write"]
    prove_instrument(ctx, suite.resolve("P1"), models, never_run)
    assert ctx.preflight == ""


def test_skip_preflight_is_what_the_plan_records_for_a_real_model(
    red_suite: Path, tmp_path: Path
) -> None:
    suite = Suite(red_suite)
    ctx = RunContext(suite=suite, workdir=tmp_path, results=tmp_path / "r.tsv", run_id="r1",
                     scripted=NeverProven())  # fmt: skip
    ctx.skip_preflight = True
    prove_instrument(ctx, suite.resolve("P1"), ["sonnet"], never_run)
    assert ctx.preflight == "skipped"


def test_skip_preflight_on_the_command_line_is_in_the_plan(
    red_suite: Path, api: ScriptedServer, tmp_path: Path
) -> None:
    """A budget of 0 plans every rep and starts none, so the plan can be read while nothing
    launches; the self-test is red, so only skipping lets it be planned at all."""
    work = tmp_path / "w"
    args = ["--suite", str(red_suite), "grid", str(work), "--models", "sonnet", "--scenarios",
            "N1", "--skip-preflight", "--max-cost-usd", "0", "--allow-unfrozen"]  # fmt: skip
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    plans = Workdir(work).read_plans().items
    assert plans and {p.preflight for p in plans} == {"skipped"}
    assert "--skip-preflight" in plans[0].command
    assert api.requests == [], "a request left for the API"

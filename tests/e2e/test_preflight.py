"""Proving the instrument before a real model, through the real CLI: the self-test and one
`policy:oracle` rep run first, and a red one refuses the paid work. The real model's requests
go to a scripted stand-in on loopback with a dummy key, counted, never to a real API."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalkit.models import Script
from evalkit.reference.scripted_server import ScriptedServer

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

PLUGIN = "fixtures/plugins/os-vault"


@pytest.fixture
def kit(
    new_kit: Callable[..., Kit], suite_copier: Callable[..., Path], tmp_path: Path
) -> Iterator[Kit]:
    """A frozen copy of the suite with one scenario, so that its self-test takes a moment."""
    made = new_kit(tmp_path / "kit", suite=suite_copier(tmp_path / "suite", only={"N1"}))
    done = made.run("suite", "freeze")
    assert done.returncode == 0, done.why()
    yield made
    made.leftovers(grace=0)


@pytest.fixture
def api(kit: Kit) -> Iterator[ScriptedServer]:
    """The stand-in a real model name is sent to."""
    with ScriptedServer(Script(final_text="Done.")) as server:
        kit.extra_env.update(
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
            EVALKIT_JUDGE_CMD="echo NO",
        )
        yield server


def plans(kit: Kit, work_name: str) -> list[dict[str, object]]:
    path = kit.base / work_name / "plans.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_proven_instrument_lets_the_real_model_run_and_the_plan_says_so(
    kit: Kit, api: ScriptedServer
) -> None:
    done = kit.run("run", "N1", "sonnet", str(kit.base / "w"), timeout=300)
    assert done.returncode == 0, done.why()
    (plan,) = plans(kit, "w")
    assert plan["preflight"] == "passed", plan
    assert "preflight passed: self-test" in done.stderr, done.why()
    assert [r["model"] for r in kit.tsv(kit.base / "w")] == ["sonnet"]
    assert [r for r in api.requests if not r.side], "the real model's rep never ran"
    assert not list(kit.tmp.glob("evalkit-preflight-*")), "the oracle's scratch folder was left"


def test_an_oracle_that_fails_through_the_cli_refuses_the_real_model(
    kit: Kit, api: ScriptedServer
) -> None:
    """A plugin copy without its hooks: the self-test (no CLI) is green, but the oracle rep
    through the CLI misses the required hook, so the run never starts."""
    broken = kit.base / "checkout" / "os-vault"
    shutil.copytree(kit.suite / PLUGIN, broken)
    shutil.rmtree(broken / "hooks")
    work = kit.base / "w"
    done = kit.run("run", "N1", "sonnet", str(work), "--plugin", str(broken), timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.why()
    assert "policy:oracle on N1-L1-reporting" in done.stderr, done.why()
    assert "hook-missing:SessionStart" in done.stderr and "--skip-preflight" in done.stderr
    assert not (work / "plans.jsonl").exists() and not (work / "results.tsv").exists()
    assert api.requests == [], "a request left for the real model"


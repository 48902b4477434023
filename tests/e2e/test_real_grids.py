"""What a real grid meets, through the real CLI: credentials, API faults a real model would
hit (served by the scripted server under the model name `sonnet`), retries, budgets, usage.
Proving the instrument first is `test_preflight.py`'s subject; here it is skipped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.pins import pinned
from evalkit.reference.scripted_server import ScriptedServer

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e


@pytest.fixture
def api(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """A stand-in for the real API that a real model name is sent to."""
    fault, script = request.param
    with ScriptedServer(script, fault) as server:
        yield server


def real_api(kit: Kit, server: ScriptedServer) -> None:
    kit.extra_env.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
        EVALKIT_JUDGE_CMD="echo NO",
    )


DONE = Script(final_text="Done.")
BUSY = Script(steps=[Step(blocks=[ToolUseBlock(name="Bash", input={"command": "true"})])] * 4)


def test_a_real_model_without_credentials_is_refused_before_anything_is_planned(
    kit: Kit,
) -> None:
    work = kit.base / "work"
    for args in (("run", "P1", "sonnet", str(work)), ("grid", str(work), "--models", "sonnet")):
        done = kit.run(*args)
        assert done.returncode == 2, done.why()
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.why()
        assert "ANTHROPIC_API_KEY" in done.stderr and "policy:oracle" in done.stderr
    assert not work.exists(), "a refused run left files"


def test_flaky_oracle_retried_once_passes_every_rep_at_attempt_2_and_verifies(
    kit: Kit,
) -> None:
    work = kit.base / "work"
    done = kit.run(
        "grid", str(work), "--models", "policy:flaky-oracle", "--scenarios", "P1,N1",
        "--reps", "1", "--jobs", "2", "--retry-errors", "1", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    rows = kit.tsv(work)
    assert len(rows) == 2
    assert {(r["verdict"], r["attempt"]) for r in rows} == {("PASS", "2")}, rows
    lines = kit.manifest(work)
    first = [x for x in lines if x["attempt"] == 1]
    assert len(first) == 2 and len(lines) == 4
    assert all(x["verdict"] == "ERROR" and x["superseded_by"] == 2 for x in first), first
    assert {x["retry_reason"] for x in first} == {"agent-error:overloaded"}
    assert all((work / x["evidence"] / "transcript.jsonl").is_file() for x in lines)

    verify = kit.run("verify", str(work))
    assert verify.returncode == 0, verify.why()
    assert "All 4 trial(s) re-derived from the kept evidence." in verify.stdout, verify.why()
    assert verify.stdout.strip().endswith("PUBLISHABLE") and "NOT" not in verify.stdout

    report = json.loads(kit.run("report", str(work), "--format", "json").stdout)
    assert report["retries"] == {
        "reps": 2, "attempts": 2, "reasons": {"agent-error:overloaded": 2}
    }  # fmt: skip
    (usage,) = report["usage"]
    assert usage["attempts"] == 4 and usage["input_tokens"] > 0
    assert usage["cost_usd_estimate"] > 0
    assert report["publishability"]["publishable"] is True



def first_reason(row: dict[str, str]) -> str:
    """The CLI's own words lead; only its exit status may follow them."""
    first, *rest = row["reasons"].split(";")
    assert all(r.startswith("cli-exit:") for r in rest), row["reasons"]
    return first

@pytest.mark.parametrize("api", [("429", DONE)], indirect=True)
def test_a_rate_limited_real_model_is_retried_and_says_so(kit: Kit, api: ScriptedServer) -> None:
    real_api(kit, api)
    work = kit.base / "work"
    done = kit.run(
        "run", "N1", "sonnet", str(work), "--retry-errors", "1", "--skip-preflight", timeout=120
    )
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    assert (row["verdict"], first_reason(row), row["attempt"]) == (
        "ERROR", "agent-error:rate-limited", "2"
    ), row  # fmt: skip
    assert "retried: agent-error:rate-limited" in done.stdout, done.why()
    assert [x["attempt"] for x in kit.manifest(work)] == [1, 2]
    assert "sk-ant-test-not-a-key" not in (work / "manifest.jsonl").read_text()


@pytest.mark.parametrize("api", [("401", DONE)], indirect=True)
def test_an_authentication_error_is_never_retried(kit: Kit, api: ScriptedServer) -> None:
    real_api(kit, api)
    work = kit.base / "work"
    done = kit.run(
        "run", "N1", "sonnet", str(work), "--retry-errors", "2", "--skip-preflight", timeout=120
    )
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    assert (first_reason(row), row["attempt"]) == ("agent-error:auth-failed:401", "1"), row
    assert len(kit.manifest(work)) == 1


@pytest.mark.parametrize("api", [(None, BUSY)], indirect=True)
def test_max_turns_is_a_budget_error_that_is_never_retried(kit: Kit, api: ScriptedServer) -> None:
    real_api(kit, api)
    work = kit.base / "work"
    done = kit.run(
        "run", "N1", "sonnet", str(work), "--max-turns", "1", "--retry-errors", "1",
        "--skip-preflight",
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    assert (row["verdict"], first_reason(row), row["attempt"]) == (
        "ERROR", "budget:max-turns", "1"
    ), row  # fmt: skip
    assert int(row["turns"]) >= 1 and float(row["cost_usd_estimate"]) > 0, row


@pytest.mark.parametrize("api", [(None, DONE)], indirect=True)
def test_max_cost_stops_new_reps_and_plans_the_rest_as_skipped(
    kit: Kit, api: ScriptedServer
) -> None:
    real_api(kit, api)
    work = kit.base / "work"
    done = kit.run(
        "grid", str(work), "--models", "sonnet", "--scenarios", "N1", "--reps", "4",
        "--jobs", "1", "--max-cost-usd", "0.0001", "--skip-preflight",
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    assert "3 rep(s) not run, planned as skipped:budget" in done.stderr, done.why()
    assert len(kit.tsv(work)) == 1
    report = kit.run("report", str(work))
    assert "INCOMPLETE" in report.stdout, report.why()
    assert "4 rep(s) planned, 1 recorded, 3 skipped:budget" in report.stdout, report.why()
    verify = kit.run("verify", str(work))
    assert verify.returncode == 0, verify.why()
    assert "3 planned rep(s) skipped:budget" in verify.stdout, verify.why()


def test_doctor_without_credentials_fails_those_lines_with_their_fix(kit: Kit) -> None:
    done = kit.run("doctor", "--ping", timeout=300)
    assert done.returncode == 1, done.why()
    lines = done.stdout.splitlines()
    assert any(x.startswith(f"OK   claude cli: {pinned('claude')}") for x in lines), done.why()
    assert any(x.startswith("OK   self-test:") for x in lines), done.why()
    assert any(x.startswith("OK   lock: frozen") for x in lines), done.why()
    (creds,) = [x for x in lines if "credentials" in x]
    assert creds.startswith("FAIL") and "fix: set ANTHROPIC_API_KEY" in creds
    (ping,) = [x for x in lines if x.startswith(("OK   ping", "FAIL ping"))]
    assert ping.startswith("FAIL ping: agent-error:not-logged-in -- fix: set"), ping


@pytest.mark.parametrize("api", [(None, DONE)], indirect=True)
def test_doctor_pings_through_the_cli_and_never_prints_the_key(
    kit: Kit, api: ScriptedServer
) -> None:
    real_api(kit, api)
    done = kit.run("doctor", "--ping", "--model", "sonnet", "--no-self-test", timeout=300)
    assert done.returncode == 0, done.why()
    assert "OK   ping: claude-sonnet" in done.stdout, done.why()
    assert "self-test" not in done.stdout, done.why()
    assert "ANTHROPIC_API_KEY" in done.stdout and "sk-ant-test" not in done.output
    assert len([r for r in api.requests if not r.side]) == 1

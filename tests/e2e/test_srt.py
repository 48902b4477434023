"""The escape canaries under `--confine srt` through the real CLI: the same contract as
bubblewrap's (nothing lands outside the rep, nothing of the suite is read, each attempt
named, the oracle PASSes), and each row says what srt leaves visible."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.records.folder.workdir import Workdir
from evalkit.reference.escape import PORT_ENV
from evalkit.reference.recon import LOOK
from evalkit.reference.scripted import POLICIES
from evalkit.run.backends.srt import SandboxRuntime
from evalkit.run.context import RunContext, new_run_id
from evalkit.run.prerequisites.preflight import RunReps, prove_instrument
from evalkit.run.prerequisites.world_look import tool_result
from evalkit.run.rep import RepOutcome, finish_rep, launch_rep, prepare_rep
from evalkit.run.session import run_scenario
from evalkit.suite.config import Suite
from evalkit.suite.scenarios import ScenarioFile
from tests.e2e.conftest import Kit
from tests.e2e.test_escape import (
    _arrived,
    _escape_files,
    _missing_flags,
    _private_suite,
    _results,
    _suite_reads,
    listener,
)

__all__ = ["listener"]


def _declares(flags: list[str]) -> bool:
    """Whether a row says what srt leaves visible: its channels, and the guarded paths'
    variables where the rep was handed one (the root suite's are)."""
    said = [f.removeprefix("world:partial:").split(",") for f in flags
            if f.startswith("world:partial:")]  # fmt: skip
    return said == [[*SandboxRuntime.partial, "guarded-env"]]


_MISSING = SandboxRuntime().unavailable()
pytestmark = [pytest.mark.e2e]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _srt_installed() -> None:
    """Skips where srt is not installed, but fails under CI=true, which installs it."""
    if _MISSING is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(_MISSING)
        pytest.skip(_MISSING)


def test_escape_under_srt_lands_nothing_reads_nothing_and_is_flagged_partial(
    kit: Kit, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    kit.extra_env[PORT_ENV] = str(port)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:escape", str(work), "--confine", "srt")
    assert done.returncode == 0, done.why()
    assert _escape_files(kit) == [], "escape files landed outside the rep"
    assert not _arrived(listener), "a connection reached the loopback port outside"
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert [r["verdict"] for r in rows] == ["PASS"], [r["reasons"] for r in rows]
    flags = rows[0]["flags"].split(";")
    assert _declares(flags), "the srt row does not say what stays visible"
    scenario = next((kit.suite / "scenarios").glob("P1-*.md")).name
    missing = _missing_flags(kit, work, scenario, port, rows[0]["flags"])
    assert not missing, f"flags missing: {missing}"
    assert _suite_reads(kit, _results(work, lines[0])) == []


def test_oracle_under_srt_passes_and_declares_its_backend(kit: Kit) -> None:
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work), "--confine", "srt")
    assert done.returncode == 0, done.why()
    assert [r["verdict"] for r in kit.tsv(work)] == ["PASS"]
    assert kit.manifest(work)[0]["declarations"]["confinement"] == "srt"


@pytest.mark.slow
def test_escape_in_a_two_job_grid_under_srt_holds_for_every_rep(
    kit: Kit, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    kit.extra_env[PORT_ENV] = str(port)
    work = kit.base / "work"
    done = kit.run(
        "grid", str(work), "--scenarios", "P1,N1", "--models", "policy:escape", "--reps", "1",
        "--jobs", "2", "--confine", "srt", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    assert _escape_files(kit) == [], "escape files landed outside the rep"
    assert not _arrived(listener), "a connection reached the loopback port outside"
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert len(rows) == 2 and {r["verdict"] for r in rows} == {"PASS"}, rows
    scenarios = {p.name.split("-")[0]: p.name for p in (kit.suite / "scenarios").glob("*.md")}
    for row in rows:
        name = scenarios[row["scenario"].split("-")[0]]
        missing = _missing_flags(kit, work, name, port, row["flags"])
        assert not missing, f"{row['scenario']} rep {row['rep']}: flags missing: {missing}"
        assert _declares(row["flags"].split(";")), row["rep"]
    for line in lines:
        assert _suite_reads(kit, _results(work, line)) == [], line["evidence"]


def _proof(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_reps: RunReps) -> RunContext:
    """The preflight of a run under srt, as on a Mac (where srt's rows need the proof), with
    a HOME of the test's own for the escape's targets."""
    monkeypatch.setattr(SandboxRuntime, "proves_here", True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    suite = Suite(REPO)
    ctx = RunContext(suite, work, work / "results.tsv", new_run_id(), scripted=POLICIES,
                     template_sandboxes=False, backend="srt")  # fmt: skip
    prove_instrument(ctx, suite.resolve("P1"), ["policy:oracle"], run_reps)
    return ctx


@pytest.mark.slow
def test_where_only_this_machine_can_prove_srt_the_preflight_runs_the_escape_and_it_holds(
    claude_cli: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _proof(tmp_path, monkeypatch, run_scenario)
    assert ctx.escape_proof == "held"
    outcome = run_scenario(ctx, ctx.suite.resolve("P1"), "policy:oracle", 1)[0]
    assert outcome.verdict.verdict == "PASS"
    line = Workdir(ctx.workdir).read_evidence_index().items[0]
    assert line.declarations["escape_proof"] == "held"


@pytest.mark.slow
def test_a_canary_that_lands_outside_fails_the_proof_and_is_removed(
    claude_cli: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def leaky(ctx: RunContext, scenario: ScenarioFile, model: str, reps: int) -> list[RepOutcome]:
        done = run_scenario(ctx, scenario, model, reps)
        (Path.home() / "evalkit-escape-redirect.txt").write_text("escaped\n")  # as if it landed
        return done

    ctx = _proof(tmp_path, monkeypatch, leaky)
    assert ctx.escape_proof == "failed"
    assert list((tmp_path / "home").glob("evalkit-escape*")) == []


def _seen_under_srt(
    look: dict[str, str], scratch: Path, guarded: list[str]
) -> tuple[set[str], list[str]]:
    """(the channels a recon rep's look-around shows of the machine, the variables srt set
    inside that the CLI's tools still see). srt's own list of what it sets is read from its
    bubblewrap launcher's command line (`--setenv NAME VALUE`), as the agent could read it."""
    launcher = look[LOOK[8]].split("\n", 1)[0].split()
    env = {line.partition("=")[0] for line in look["env"].splitlines() if "=" in line}
    uid = look["id; hostname"].partition("uid=")[2].partition("(")[0]
    mounts = look[LOOK[8]].split("\n", 1)[-1]
    seen = {
        "paths": look["pwd"].strip().startswith(str(scratch)),
        "proxy": bool(env & {"HTTP_PROXY", "HTTPS_PROXY"}),
        "hostname": look["id; hostname"].splitlines()[-1].strip() == socket.gethostname(),
        "ownership": uid == "0",
        "mountinfo": f" {scratch}/" in mounts,
        "processes": bool(launcher) and Path(launcher[0]).name == "bwrap",
        "guarded-env": bool(env & set(guarded)),
    }
    names = {launcher[i + 1] for i, word in enumerate(launcher[:-1]) if word == "--setenv"}
    kept = {"TMPDIR", "HTTP_PROXY", "http_proxy"}  # put back to the rep's own; the door's
    return {k for k, v in seen.items() if v}, sorted((names - kept) & env)


@pytest.mark.slow
def test_a_recon_under_srt_sees_exactly_what_its_rows_declare(
    claude_cli: str, tmp_path: Path
) -> None:
    """Every channel the row declares partial shows in a real look-around under srt, and
    nothing else the world would hide does (cli-memory aside, which no look can show); of
    every variable srt sets inside, only the door's proxy variable and TMPDIR reach the CLI."""
    work = tmp_path / "work"
    work.mkdir()
    suite = Suite(REPO)
    ctx = RunContext(suite, work, work / "results.tsv", new_run_id(), scripted=POLICIES,
                     template_sandboxes=False, backend="srt")  # fmt: skip
    prepared = prepare_rep(ctx, suite.resolve("P1"), "policy:recon", 1)
    assert prepared.server is not None
    scratch = prepared.scratch
    verdict = finish_rep(ctx, launch_rep(ctx, prepared)).verdict
    assert verdict.verdict == "PASS", verdict.reasons
    requests = [json.loads(b) for b in prepared.server.bodies]
    look = {command: tool_result(requests, command) for command in LOOK}
    seen, leaked = _seen_under_srt(look, scratch, suite.checker.guarded_env_names())
    [declared] = [f for f in verdict.flags if f.startswith("world:partial:")]
    channels = declared.removeprefix("world:partial:").split(",")
    assert seen == set(channels) - {"cli-memory"}, (sorted(seen), channels)
    assert "guarded-env" in seen and "paths" in seen  # the root suite's rep: both hold
    assert leaked == [], f"variables srt set that reached the CLI's tools: {leaked}"


@pytest.mark.slow
def test_no_process_under_srt_shows_a_task_line_while_the_agent_waits(
    kit: Kit, tasks: list[tuple[str, str]]
) -> None:
    """The `/proc` Task scan of `test_task_channel.py`, the rep confined by srt: srt's Node,
    its bubblewrap, the shells it starts and the CLI each hold no Task line."""
    from tests.e2e.test_task_channel import (
        CLI_FLAGS,
        _family,
        _process_texts,
        assert_no_task_line,
        wait_until_held,
    )

    held = kit.tmp / "held"
    kit.extra_env["EVALKIT_SCRIPTED_HELD"] = str(held)
    proc = kit.start("run", "N1", "policy:fault-hang", str(kit.base / "work"), "--timeout", "90",
                     "--confine", "srt")  # fmt: skip
    try:
        wait_until_held(proc, held)
        family = _family(proc.pid)
        agents = [a for a in kit.agents() if str(a.pid) in family]
        assert any(CLI_FLAGS["claude"] <= set(a.argv) for a in agents), (
            "no CLI process alive while the answer is held"
        )
        scanned = _process_texts(family)
        names = {name for _, name, _ in scanned}
        assert {"bwrap", "node"} <= names, f"srt's processes not among the rep's: {names}"
        assert_no_task_line(scanned, tasks)
    finally:
        proc.kill()
        proc.communicate()
        kit.leftovers(grace=5)

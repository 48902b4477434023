"""The escape canaries in a container, Docker's and Podman's, through the real CLI: the same
contract as bubblewrap's (nothing lands outside the rep, nothing of the suite is read, each
attempt named, the oracle PASSes, the world's recon finds no marker), each row saying what a
container still tells (`world:partial:…,container`). Docker's oracle and the reaping of a
dead owner's container run in `make test`; the rest in `make calibrate-suites`."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.reference.escape import PORT_ENV
from evalkit.run.backends import backend
from evalkit.run.backends.container import OWNER, Engine, _owner
from evalkit.run.context import RunContext, new_run_id
from evalkit.run.rep import finish_rep, launch_rep, prepare_rep, world_partial
from evalkit.suite.config import Suite
from tests.e2e.conftest import Kit
from tests.e2e.test_escape import (
    _arrived,
    _escape_files,
    _missing_flags,
    _outside,
    _private_suite,
    _results,
    _suite_reads,
    listener,
)

__all__ = ["listener"]
pytestmark = [pytest.mark.e2e]
REPO = Path(__file__).resolve().parents[2]
RECORDS = ("results.tsv", "plans.jsonl", "manifest.jsonl", "evidence", "subjects")


def _engine(name: str) -> Engine:
    """The engine; skips where it cannot confine, but fails under CI=true, which installs
    and starts both."""
    chosen = backend(name)
    assert isinstance(chosen, Engine)
    missing = chosen.unavailable()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    return chosen


@pytest.fixture(params=["docker", "podman"])
def engine(request: pytest.FixtureRequest) -> Engine:
    return _engine(request.param)


@pytest.mark.parametrize("name", ["docker", pytest.param("podman", marks=pytest.mark.slow)])
def test_oracle_in_a_container_passes_and_declares_its_backend_and_image(
    kit: Kit, name: str
) -> None:
    engine = _engine(name)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work), "--confine", engine.name)
    assert done.returncode == 0, done.why()
    rows = kit.tsv(work)
    assert [r["verdict"] for r in rows] == ["PASS"], [r["reasons"] for r in rows]
    assert "container" in rows[0]["flags"].split(";")[-1].split(","), rows[0]["flags"]
    declared = kit.manifest(work)[0]["declarations"]
    assert declared["confinement"] == engine.name
    assert declared["confinement_image"] == engine.declarations()["confinement_image"]


@pytest.mark.slow
def test_escape_in_a_container_lands_nothing_reads_nothing_and_names_its_attempts(
    kit: Kit, engine: Engine, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    kit.extra_env[PORT_ENV] = str(port)
    work = kit.base / "work"
    before = _outside(kit, work)
    done = kit.run("run", "P1", "policy:escape", str(work), "--confine", engine.name)
    assert done.returncode == 0, done.why()
    assert _escape_files(kit) == [], "escape files landed outside the rep"
    assert _outside(kit, work) - before <= {str(work / n) for n in RECORDS}
    assert not _arrived(listener), "a connection reached the loopback port outside"
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert [r["verdict"] for r in rows] == ["PASS"], [r["reasons"] for r in rows]
    scenario = next((kit.suite / "scenarios").glob("P1-*.md")).name
    missing = _missing_flags(kit, work, scenario, port, rows[0]["flags"])
    assert not missing, f"flags missing: {missing}"
    assert _suite_reads(kit, _results(work, lines[0])) == []


@pytest.mark.slow
def test_escape_in_a_two_job_grid_of_containers_holds_for_every_rep(
    kit: Kit, engine: Engine, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    kit.extra_env[PORT_ENV] = str(port)
    work = kit.base / "work"
    done = kit.run(
        "grid", str(work), "--scenarios", "P1,N1", "--models", "policy:escape", "--reps", "1",
        "--jobs", "2", "--confine", engine.name, timeout=300,
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
    for line in lines:
        assert _suite_reads(kit, _results(work, line)) == [], line["evidence"]


@pytest.mark.slow
def test_recon_of_the_root_suites_world_in_a_container_finds_no_marker(
    claude_cli: str, engine: Engine, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    suite = Suite(REPO)
    from evalkit.reference.scripted import POLICIES

    ctx = RunContext(suite, work, work / "results.tsv", new_run_id(), scripted=POLICIES,
                     template_sandboxes=False, backend=engine.name)  # fmt: skip
    prepared = prepare_rep(ctx, suite.resolve("P1"), "policy:recon", 1)
    verdict = finish_rep(ctx, launch_rep(ctx, prepared)).verdict
    markers = [r for r in verdict.reasons if r.startswith("marker:")]
    assert markers == [], markers
    assert verdict.verdict == "PASS", verdict.reasons
    declared = world_partial(suite) + ["container"]  # ownership holds where evalkit is root
    assert f"world:partial:{','.join(declared)}" in verdict.flags, verdict.flags


@pytest.mark.parametrize("name", ["docker", "podman"])
def test_a_container_whose_owner_is_gone_is_reaped_and_a_living_owners_kept(name: str) -> None:
    engine = _engine(name)
    tool, env = engine.tool() or name, {**os.environ, **engine.client_env()}
    made = []
    for owner in ("1:0", _owner(os.getpid())):  # pid 1 never started at tick 0
        rep = f"evalkit-rep-reap{len(made)}{os.getpid()}"
        subprocess.run([tool, "create", "--name", rep, "--label", f"{OWNER}={owner}",
                        engine.declarations()["confinement_image"], "/bin/true"],
                       check=True, capture_output=True, env=env)  # fmt: skip
        made.append(rep)
    try:
        reaped = engine.reap()
        left = subprocess.run([tool, "ps", "-a", "--format", "{{.Names}}"], capture_output=True,
                              text=True, env=env).stdout.split()  # fmt: skip
        assert made[0] in reaped and made[0] not in left
        assert made[1] not in reaped and made[1] in left
    finally:
        for rep in made:  # one at a time: Podman stops at a name that is gone
            subprocess.run([tool, *engine.remove, rep], capture_output=True, env=env)


def _container_pids(engine: Engine, kit: Kit) -> set[str]:
    """The host pids of every process in this kit's reps' containers, by their cgroup."""
    tool, env = engine.tool() or engine.name, {**os.environ, **engine.client_env()}
    ids = []
    for scratch in kit.scratch.glob("evalkit-*"):
        name = "evalkit-" + scratch.name.removeprefix("evalkit-")
        said = subprocess.run([tool, "inspect", "--format", "{{.Id}}", name],
                              capture_output=True, text=True, env=env)  # fmt: skip
        ids += [said.stdout.strip()] if said.returncode == 0 and said.stdout.strip() else []
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            cgroup = (entry / "cgroup").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if any(i in cgroup for i in ids):
            found.add(entry.name)
    return found


@pytest.mark.slow
def test_no_process_of_a_container_shows_a_task_line_while_the_agent_waits(
    kit: Kit, engine: Engine, tasks: list[tuple[str, str]]
) -> None:
    from tests.e2e.test_task_channel import (
        _family,
        _process_texts,
        assert_no_task_line,
        wait_until_held,
    )

    held = kit.tmp / "held"
    kit.extra_env["EVALKIT_SCRIPTED_HELD"] = str(held)
    work = kit.base / "work"
    proc = kit.start("run", "N1", "policy:fault-hang", str(work), "--timeout", "90",
                     "--confine", engine.name)  # fmt: skip
    cli = str(Path(kit.cli).resolve())
    try:
        wait_until_held(proc, held)
        inside = _container_pids(engine, kit)
        scanned = _process_texts(_family(proc.pid) | inside)
        assert any(text.split("\n")[0] == cli for pid, _, text in scanned if pid in inside), (
            "no CLI process alive in the container while the answer is held"
        )
        assert_no_task_line(scanned, tasks)
    finally:
        proc.kill()
        proc.communicate()
        kit.leftovers(grace=5)

"""`evalkit run` and `evalkit grid` end to end: real `evalkit` processes driving the real
Claude Code CLI against the scripted model, each in a throwaway HOME, scratch and
real-vault stand-in.

Held-out rule: no test prints or asserts on a Task block; Task text is read in-process only
to check that outputs do not contain it.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import without_signals

if TYPE_CHECKING:
    from conftest import Done, Kit

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]

POLICIES = ("oracle", "always-write", "never-write", "offer-only", "sloppy-write", "breach")

# (policy, scenario) -> (verdict, a reason that must start one of the row's reasons)
EXPECTED = {
    ("oracle", "P1"): ("PASS", None),
    ("oracle", "N1"): ("PASS", None),
    ("always-write", "P1"): ("PASS", None),
    ("always-write", "N1"): ("FAIL", "vault-write:"),
    ("never-write", "P1"): ("FAIL", "A-fail:"),
    ("never-write", "N1"): ("PASS", None),
    ("offer-only", "P1"): ("PASS", "A-via:offered"),
    ("offer-only", "N1"): ("PASS", None),
    ("sloppy-write", "P1"): ("FAIL", "B-fail:"),
    ("sloppy-write", "N1"): ("FAIL", "vault-write:"),
    ("breach", "P1"): ("FAIL", "real-vault-breach"),
    ("breach", "N1"): ("FAIL", "real-vault-breach"),
}


def short(scenario: str) -> str:
    return scenario.split("-")[0]


def reasons(row: dict[str, str]) -> list[str]:
    return [r for r in row["reasons"].split(";") if r and r != "-"]


def process_record(workdir: Path, line: dict[str, object]) -> dict[str, object]:
    folder = workdir / str(line["evidence"])
    files = line["files"]
    assert isinstance(files, dict)
    return json.loads((folder / files["process"]).read_text())


# ------------------------------------------------------------------ one grid, every policy


@pytest.fixture(scope="module")
def policy_grid(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, Path, Done]:
    kit = new_kit(tmp_path_factory.mktemp("policy-grid"))
    work = kit.base / "work"
    models = ",".join(f"policy:{p}" for p in POLICIES)
    done = kit.run("grid", str(work), "--scenarios", "P1,N1", "--models", models, "--jobs", "4")
    assert done.returncode == 0, done.why()
    return kit, work, done


@pytest.mark.parametrize(("policy", "scenario"), sorted(EXPECTED))
def test_each_policy_gets_its_expected_verdict(
    policy_grid: tuple[Kit, Path, Done], policy: str, scenario: str
) -> None:
    kit, work, _ = policy_grid
    rows = [
        r
        for r in kit.tsv(work)
        if r["model"] == f"policy:{policy}" and short(r["scenario"]) == scenario
    ]
    assert len(rows) == 1, f"{len(rows)} rows for {policy} on {scenario}"
    row = rows[0]
    verdict, reason = EXPECTED[(policy, scenario)]
    assert row["verdict"] == verdict, f"{policy} on {scenario}: {row}"
    if reason is not None:
        assert any(r.startswith(reason) for r in reasons(row)), f"no {reason} reason: {row}"
    if verdict == "PASS":
        assert not any("breach" in r for r in reasons(row)), row


def test_a_policy_grid_writes_one_row_and_one_manifest_line_per_rep(
    policy_grid: tuple[Kit, Path, Done],
) -> None:
    kit, work, _ = policy_grid
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert len(rows) == len(lines) == len(EXPECTED)
    assert {(r["scenario"], r["model"], r["rep"]) for r in rows} == {
        (x["scenario"], x["model"], str(x["rep"])) for x in lines
    }
    for line in lines:
        assert (work / line["evidence"]).is_dir(), line["evidence"]


def test_a_breach_is_kept_out_of_the_real_vault_stand_in_and_stays_a_breach_fail(
    policy_grid: tuple[Kit, Path, Done],
) -> None:
    """Confined, the breach policy's writes never reach the real vault (absent from its
    sandbox); its attempt shows in the transcript and stays a breach FAIL."""
    from evalkit.suite.config import load_suite

    kit, work, _ = policy_grid
    suite = load_suite(REPO_ROOT)
    expected_notes = []
    for ref in ("P1", "N1"):
        scenario = suite.resolve(ref)
        calibration = suite.reference.calibration_for(scenario)
        note = getattr(calibration, "note", None) or calibration.tempting_note
        expected_notes.append(note.path)
    landed = sorted(str(p.relative_to(kit.real_vault)) for p in kit.real_vault.rglob("*"))
    assert landed == [], f"files landed in the real vault stand-in: {landed}"
    breach_rows = [r for r in kit.tsv(work) if r["model"] == "policy:breach"]
    assert breach_rows and all(r["verdict"] == "FAIL" for r in breach_rows), breach_rows
    assert all("real-vault-breach:" in r["reasons"] for r in breach_rows), breach_rows
    names = {Path(rel).name for rel in expected_notes}
    near_home = [p for p in kit.home.rglob("*") if p.name in names]
    assert not near_home, f"breach notes under HOME: {near_home}"
    assert not (kit.home / "Documents").exists(), "something created ~/Documents in the test HOME"
    for line in kit.manifest(work):
        guarded = process_record(work, line)["guarded_env"]
        assert guarded == {"EVALKIT_REAL_VAULT": str(kit.real_vault)}, guarded


def test_policy_reps_leave_no_process_behind(policy_grid: tuple[Kit, Path, Done]) -> None:
    kit, _, _ = policy_grid
    assert not kit.leftovers(), "claude processes left behind"


# ------------------------------------------------------------------ a plain `evalkit run`


@pytest.fixture(scope="module")
def plain_run(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, Path, Done]:
    kit = new_kit(tmp_path_factory.mktemp("plain-run"))
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work), "--keep-sandboxes")
    assert done.returncode == 0, done.why()
    return kit, work, done


def test_plain_run_records_one_passing_rep(plain_run: tuple[Kit, Path, Done]) -> None:
    kit, work, done = plain_run
    assert "P1-L1-reporting policy:oracle rep 1: PASS" in done.stdout, done.why()
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert [(r["scenario"], r["model"], r["rep"], r["verdict"]) for r in rows] == [
        ("P1-L1-reporting", "policy:oracle", "1", "PASS")
    ]
    assert len(lines) == 1 and lines[0]["run_id"] == rows[0]["run_id"]
    assert rows[0]["bundle_id"] == lines[0]["bundle_id"]
    plans = [json.loads(x) for x in (work / "plans.jsonl").read_text().splitlines()]
    assert [p["run_id"] for p in plans] == [rows[0]["run_id"]]
    folder = work / lines[0]["evidence"]
    for rel in lines[0]["files"].values():
        assert (folder / rel).is_file(), rel
    verify = kit.run("verify", str(work))
    assert verify.returncode == 0, verify.why()
    assert not kit.leftovers(), "claude processes left behind"


def test_check_rescores_a_kept_sandbox(plain_run: tuple[Kit, Path, Done]) -> None:
    kit, _, _ = plain_run
    sandboxes = sorted(kit.scratch.glob("evalkit-rep-*/sandbox"))
    assert len(sandboxes) == 1, "--keep-sandboxes kept no sandbox"
    done = kit.run("check", str(sandboxes[0]), "--json")
    assert done.returncode == 0, done.why()
    assert json.loads(done.stdout)["verdict"] == "PASS"
    tsv = kit.run("check", str(sandboxes[0]), "--tsv", "policy:oracle")
    assert tsv.returncode == 0 and tsv.stdout.split("\t")[4] == "PASS", tsv.why()


# ------------------------------------------------------------------ faults and timeouts


@pytest.fixture(scope="module")
def faults(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, dict[str, tuple[Path, Done]]]:
    """The four answering faults in one grid (timeout 60), and fault-hang at --timeout 5 and
    --timeout 3 beside it, all at once."""
    kit = new_kit(tmp_path_factory.mktemp("faults"))
    grid, hang5, hang3 = (kit.base / n for n in ("grid", "hang5", "hang3"))
    models = "policy:fault-500,policy:fault-529,policy:fault-401,policy:fault-429,policy:fault-cut"
    done = kit.run_many(
        ("grid", str(grid), "--scenarios", "N1", "--models", models, "--jobs", "5",
         "--timeout", "60"),
        ("run", "N1", "policy:fault-hang", str(hang5), "--timeout", "5"),
        ("run", "N1", "policy:fault-hang", str(hang3), "--timeout", "3"),
    )  # fmt: skip
    for one in done:
        assert one.returncode == 0, one.why()
    return kit, {"grid": (grid, done[0]), "hang5": (hang5, done[1]), "hang3": (hang3, done[2])}


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("fault-500", "agent-error:server-error:500"),
        ("fault-529", "agent-error:overloaded"),
        ("fault-401", "agent-error:auth-failed:401"),
        ("fault-429", "agent-error:rate-limited"),
        ("fault-cut", "agent-error:connection-lost"),
    ],
)
def test_an_answering_fault_is_an_error_row_well_within_its_timeout(
    faults: tuple[Kit, dict[str, tuple[Path, Done]]], fault: str, reason: str
) -> None:
    kit, runs = faults
    work, _ = runs["grid"]
    rows = [r for r in kit.tsv(work) if r["model"] == f"policy:{fault}"]
    assert len(rows) == 1, f"{len(rows)} rows for {fault}"
    assert rows[0]["verdict"] == "ERROR", rows[0]
    assert any(r.startswith(reason) for r in reasons(rows[0])), rows[0]
    (line,) = [x for x in kit.manifest(work) if x["model"] == f"policy:{fault}"]
    record = process_record(work, line)
    assert record["stopped"] is None, record
    assert record["seconds"] < 20, f"{fault} took {record['seconds']} s of its 60"


@pytest.mark.parametrize("timeout", [5, 3])
def test_a_hang_is_killed_at_its_timeout(
    faults: tuple[Kit, dict[str, tuple[Path, Done]]], timeout: int
) -> None:
    kit, runs = faults
    work, done = runs[f"hang{timeout}"]
    rows = kit.tsv(work)
    assert [(r["verdict"], without_signals(r["reasons"])) for r in rows] == [
        ("ERROR", f"timeout:{timeout}s")
    ]
    (line,) = kit.manifest(work)
    record = process_record(work, line)
    assert record["stopped"] == "timeout", record
    assert timeout <= record["seconds"] < timeout + 4, record
    assert done.seconds < timeout + 10, f"evalkit run took {done.seconds:.1f} s"


def test_faults_leave_no_process_behind(
    faults: tuple[Kit, dict[str, tuple[Path, Done]]],
) -> None:
    kit, _ = faults
    assert not kit.leftovers(), "claude processes left behind"


# ------------------------------------------------------------------ Ctrl-C and SIGTERM


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_rep_and_records_it_as_interrupted(
    kit: Kit, sig: signal.Signals
) -> None:
    work = kit.base / "work"
    proc = kit.start("run", "N1", "policy:fault-hang", str(work), "--timeout", "60")
    stdout, stderr, took = kit.interrupt(proc, 1, sig, timeout=20)
    assert proc.returncode == 130, f"exit {proc.returncode}\n{stdout}\n{stderr}"
    assert took < 6, f"evalkit took {took:.1f} s to stop"
    assert "Traceback" not in stderr, stderr
    rows = kit.tsv(work)
    got = [(r["verdict"], without_signals(r["reasons"])) for r in rows]
    assert got == [("ERROR", "interrupted")]
    lines = kit.manifest(work)
    assert len(lines) == 1 and lines[0]["verdict"] == "ERROR"
    assert lines[0]["run_id"] == rows[0]["run_id"]
    assert not kit.leftovers(), "claude processes left behind"


def test_a_signal_during_sandbox_setup_still_leaves_an_error_row(kit: Kit) -> None:
    work = kit.base / "work"
    proc = kit.start("run", "P1", "policy:oracle", str(work), "--timeout", "60")
    try:
        deadline = time.monotonic() + 30
        while not list(kit.scratch.glob("evalkit-rep-*/sandbox/project")):
            assert time.monotonic() < deadline, "no sandbox after 30 s"
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert not kit.leftovers(), "claude processes left behind"
    rows = kit.tsv(work)
    got = [(r["verdict"], without_signals(r["reasons"])) for r in rows]
    assert got == [("ERROR", "interrupted")]


# ------------------------------------------------------------------ refusals


def test_a_missing_plugin_dir_is_refused_in_one_line(
    new_kit: Callable[..., Kit], suite_copier: Callable[..., Path], tmp_path: Path
) -> None:
    suite = suite_copier(tmp_path / "suite")
    config = suite / "evalkit.yaml"
    text = config.read_text()
    assert "fixtures/plugins/os-vault" in text
    config.write_text(text.replace("fixtures/plugins/os-vault", "fixtures/plugins/not-here"))
    kit = new_kit(tmp_path / "kit", suite=suite)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work))
    assert done.returncode == 2, done.why()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.why()
    assert str(suite / "fixtures" / "plugins" / "not-here") in lines[0], done.why()
    assert "Traceback" not in done.output
    assert not kit.tsv(work), "a refused run wrote a row"
    assert not kit.manifest(work)


@pytest.fixture(scope="module")
def wrong_cli(
    new_kit: Callable[..., Kit], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Kit, Path, Done]:
    """One run refused for an EVALKIT_CLAUDE that does not exist, read by two tests."""
    kit = new_kit(tmp_path_factory.mktemp("wrong-cli"))
    work = kit.base / "work"
    env = {**kit.env, "EVALKIT_CLAUDE": "/nonexistent"}
    return kit, work, kit.run("run", "P1", "policy:oracle", str(work), env=env)


def test_a_wrong_evalkit_claude_is_refused(wrong_cli: tuple[Kit, Path, Done]) -> None:
    kit, work, done = wrong_cli
    assert done.returncode == 2, done.why()
    assert len(done.stderr.strip().splitlines()) == 1, done.why()
    assert "/nonexistent" in done.stderr and "Traceback" not in done.output
    assert not kit.tsv(work) and not kit.manifest(work)


def test_a_wrong_evalkit_claude_says_how_to_install(wrong_cli: tuple[Kit, Path, Done]) -> None:
    _, _, done = wrong_cli
    assert done.returncode == 2
    assert "make setup" in done.stderr or "npm install" in done.stderr, done.why()


def test_no_cli_anywhere_says_how_to_install(kit: Kit) -> None:
    """EVALKIT_CLAUDE unset, no claude on PATH, and the project-local copy out of sight: the
    package is run from a copy outside the repository, whose .tools/ does not exist."""
    package = kit.base / "pkg"
    shutil.copytree(
        REPO_ROOT / "evalkit", package / "evalkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {k: v for k, v in kit.env.items() if k != "EVALKIT_CLAUDE"}
    env.update(PATH="/usr/bin:/bin", PYTHONPATH=str(package))
    assert shutil.which("claude", path=env["PATH"]) is None, "a claude on /usr/bin:/bin"
    work = kit.base / "work"
    probe = "import evalkit, sys; from evalkit.cli.main import main; sys.argv[0] = 'evalkit'; "
    proc = subprocess.run(
        [sys.executable, "-c", probe + "print(evalkit.__file__, file=sys.stderr); main()",
         "--suite", str(REPO_ROOT), "run", "P1", "policy:oracle", str(work)],
        cwd=kit.base, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    first, _, rest = proc.stderr.partition("\n")
    assert first.startswith(str(package)), f"the copy was not the one imported: {first}"
    assert proc.returncode == 2, proc.stderr
    assert "make setup" in rest or "npm install" in rest, rest
    assert "Traceback" not in proc.stderr
    assert not kit.tsv(work)


def test_a_refused_run_leaves_nothing_that_verify_counts(
    plain_run: tuple[Kit, Path, Done], kit: Kit
) -> None:
    """A refused run appended to a copy of the plain run's folder (the fixture stays as it
    was recorded)."""
    work = kit.base / "work"
    shutil.copytree(plain_run[1], work)
    env = {**kit.env, "EVALKIT_CLAUDE": "/nonexistent"}
    assert kit.run("run", "N1", "policy:oracle", str(work), env=env).returncode == 2
    verify = kit.run("verify", str(work))
    assert verify.returncode == 0, verify.why()


def test_a_reserve_scenario_is_refused_without_reserve(kit: Kit) -> None:
    work = kit.base / "work"
    run = kit.run("run", "P4", "policy:oracle", str(work))
    assert run.returncode == 2, run.why()
    assert "--reserve" in run.stderr and "Traceback" not in run.output
    grid = kit.run("grid", str(work), "--scenarios", "P4", "--models", "policy:oracle")
    assert grid.returncode == 2, grid.why()
    assert "Traceback" not in grid.output
    assert not kit.tsv(work) and not kit.manifest(work)
    assert not (work / "plans.jsonl").exists()


# ------------------------------------------------------------------ the held-out rule


def test_no_command_output_contains_a_task_block(
    policy_grid: tuple[Kit, Path, Done],
    plain_run: tuple[Kit, Path, Done],
    faults: tuple[Kit, dict[str, tuple[Path, Done]]],
    new_kit: Callable[..., Kit],
    suite_copier: Callable[..., Path],
    task_leaks: Callable[[str], list[str]],
    tmp_path: Path,
) -> None:
    grid_kit, grid_work, _ = policy_grid
    run_kit, _, _ = plain_run
    sandbox = next(run_kit.scratch.glob("evalkit-rep-*/sandbox"))
    grid_kit.run("verify", str(grid_work))
    run_kit.run("check", str(sandbox))
    run_kit.run("list", "--set", "all")
    run_kit.run("list", "--set", "all", "--json")
    # self-test over every scenario takes ~30 s; a copy holding one pair (P1, N1) runs the same
    # code paths in a fraction of that
    mini = new_kit(tmp_path, suite=suite_copier(tmp_path / "mini", only={"P1", "N1"}))
    self_test = mini.run("self-test")
    assert self_test.returncode == 0, self_test.why()
    outputs = [*grid_kit.outputs, *run_kit.outputs, *faults[0].outputs, *mini.outputs]
    commands = {o.args[0] for o in outputs}
    assert {"run", "grid", "verify", "check", "list", "self-test"} <= commands
    for done in outputs:
        leaked = task_leaks(done.output)
        assert not leaked, f"`evalkit {done.args[0]}` output leaks the Task block of {leaked}"


# ------------------------------------------------------------------ the default WORKDIR


def test_the_default_workdir_is_not_git_ignored() -> None:
    for path in ("results/x", "results/results.tsv", "results/evidence/r1/transcript.jsonl"):
        done = subprocess.run(
            ["git", "check-ignore", "-q", path], cwd=REPO_ROOT, capture_output=True, timeout=30
        )
        assert done.returncode == 1, f"{path} is git-ignored (exit {done.returncode})"

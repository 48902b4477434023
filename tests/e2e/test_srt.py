"""The escape canaries under `--confine srt` through the real CLI: the same contract as
bubblewrap's (nothing lands outside the rep, nothing of the suite is read, each attempt
named, the oracle PASSes), and each row says what srt leaves visible."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.reference.escape import PORT_ENV
from evalkit.run.backends.srt import SandboxRuntime
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
_MISSING = SandboxRuntime().unavailable()
pytestmark = [pytest.mark.e2e]


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
    said = "world:partial:paths,proxy,cli-memory" in flags
    assert said, "the srt row does not say what stays visible"
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
        assert "world:partial:paths,proxy,cli-memory" in row["flags"].split(";"), row["rep"]
    for line in lines:
        assert _suite_reads(kit, _results(work, line)) == [], line["evidence"]
